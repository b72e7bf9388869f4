//! In a real browser: headless Chromium (Debian's `chromium`, installed by
//! `scripts/setup.sh`) follows three actions of `cmc explore` through the
//! links of its pages, and renders the HTML report of a World violation to
//! a PNG that must show the message sequence chart.
//!
//! Without Chromium these tests fail, saying to run `scripts/setup.sh`:
//! CI runs it first, so a missing browser is a broken setup, not a skip.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{check_reqack_bug2_with, spawn_cmc};

/// Longest one Chromium run may take.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(60);

/// The Chromium binary on `PATH`, or a failure telling how to install it.
fn chromium() -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("chromium"))
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!(
                "Chromium is not installed: run scripts/setup.sh (it installs Debian's \
                 `chromium`), then run the tests again"
            )
        })
}

/// Runs headless Chromium with `args` and returns its standard output;
/// fails the test if it does not succeed within [`CHROMIUM_TIMEOUT`].
fn run_chromium(args: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .stdout(out.reopen().unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > CHROMIUM_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} did not finish within {CHROMIUM_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "chromium {args:?}: {status}");
    std::fs::read_to_string(out.path()).unwrap()
}

/// The DOM of `url` after Chromium has loaded it.
fn dom(url: &str) -> String {
    let dom = run_chromium(&["--dump-dom", url]);
    assert!(dom.contains("</html>"), "no page at {url}: {dom}");
    dom
}

/// A running `cmc explore`, stopped when dropped.
struct Explorer {
    child: Child,
    url: String,
}

impl Explorer {
    fn start(args: &[&str], dir: &Path) -> Explorer {
        let mut all = vec!["explore", "--port", "0"];
        all.extend_from_slice(args);
        let mut child = spawn_cmc(&all, dir);
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|word| word.starts_with("http://127.0.0.1:"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_string();
        Explorer { child, url }
    }

    /// The absolute URL of the page at `href` (as the page writes it).
    fn at(&self, href: &str) -> String {
        format!(
            "{}{}",
            self.url.trim_end_matches('/'),
            href.replace("&amp;", "&")
        )
    }
}

impl Drop for Explorer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text between `start` and the next `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let (_, rest) = text.split_once(start)?;
    rest.split_once(end).map(|(inside, _)| inside)
}

/// An enabled action of a page: its link, its text and the fingerprint of
/// the state it leads to, as the actions table shows them.
struct ActionRow {
    href: String,
    text: String,
    leads_to: String,
}

fn action_rows(page: &str) -> Vec<ActionRow> {
    let table = between(page, "id=\"actions\">", "</table>").expect("an actions table");
    table
        .split("<a class=\"action\" href=\"")
        .skip(1)
        .map(|row| ActionRow {
            href: row.split('"').next().unwrap().to_string(),
            text: between(row, "<code>", "</code>").unwrap().to_string(),
            leads_to: between(row, "<span class=\"fp\">", "</span>")
                .unwrap()
                .to_string(),
        })
        .collect()
}

/// The fingerprint the page shows for its state.
fn fingerprint(page: &str) -> &str {
    between(page, "id=\"fingerprint\">", "</span>").expect("a fingerprint")
}

#[test]
fn chromium_follows_three_actions_of_a_world_in_the_explorer() {
    let dir = tempfile::tempdir().unwrap();
    let explorer = Explorer::start(
        &["--core", "rust:reqack-bug2", "--nodes", "2", "requests=2"],
        dir.path(),
    );
    let root = dom(&explorer.url);
    assert!(root.contains("Initial states"), "{root}");
    let first = between(&root, "<a class=\"initial\" href=\"", "\"").expect("an initial state");
    let mut page = dom(&explorer.at(first));
    assert!(page.contains("No message in flight."), "{page}");
    let chart = between(&page, "id=\"chart\">", "</svg>").expect("a chart");
    assert_eq!(
        chart.matches("class=\"lifeline\"").count(),
        2,
        "one per node"
    );
    assert!(!chart.contains("class=\"event\""), "no step yet: {chart}");
    // The client's request, the sender's flush, the delivery of its DATA.
    for (step, action) in ["CLIENT r0 -&gt; n0", "FLUSH n0", "DELIVER n0-&gt;n1"]
        .iter()
        .enumerate()
    {
        let rows = action_rows(&page);
        let row = rows
            .iter()
            .find(|row| row.text.starts_with(action))
            .unwrap_or_else(|| panic!("no action {action} on {page}"));
        page = dom(&explorer.at(&row.href));
        assert_eq!(
            fingerprint(&page),
            row.leads_to,
            "the state the row announced"
        );
        let path = between(&page, "id=\"path\"", "</ol>").unwrap();
        assert_eq!(path.matches("<li").count(), step + 2, "{path}");
        // The chart grows by one row per step (and a mark per reply).
        let chart = between(&page, "id=\"chart\">", "</svg>").expect("a chart");
        assert_eq!(chart.matches("class=\"lifeline\"").count(), 2);
        assert_eq!(
            chart.matches("class=\"delivery\"").count() + chart.matches("class=\"event\"").count(),
            step + 1
        );
    }
    assert!(
        page.contains("Step 3: DELIVER n0-&gt;n1 #0 DATA(r=0)"),
        "{page}"
    );
    let chart = between(&page, "id=\"chart\">", "</svg>").unwrap();
    assert_eq!(chart.matches("class=\"delivery\"").count(), 1);
    assert!(chart.contains(">DATA(r=0)</text>"), "{chart}");
    let network = between(&page, "id=\"network\">", "</table>").expect("a network table");
    assert!(
        network.contains("ACK(r=0)"),
        "the receiver's ACK is in flight"
    );
    assert!(page.contains("request r0 sent to n0"), "the ghost history");
    let nodes = between(&page, "id=\"nodes\">", "</table>").unwrap();
    assert!(
        nodes.contains("@4 01000000"),
        "n1's pending persist: {nodes}"
    );
}

/// The pixels of a PNG file as RGB triples, and its width.
fn rgb_pixels(path: &Path) -> (Vec<[u8; 3]>, u32) {
    let mut decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer).unwrap();
    let channels = info.color_type.samples();
    assert!(channels >= 3, "a colour screenshot: {:?}", info.color_type);
    let pixels = buffer[..info.buffer_size()]
        .chunks(channels)
        .map(|pixel| [pixel[0], pixel[1], pixel[2]])
        .collect();
    (pixels, info.width)
}

#[test]
fn chromium_renders_the_report_of_a_world_violation_with_its_chart() {
    let dir = tempfile::tempdir().unwrap();
    check_reqack_bug2_with(dir.path(), "bug2.cmc", &["--report", "world.html"]);
    let report = dir.path().join("world.html");
    let url = format!("file://{}", report.display());
    let page = dom(&url);
    let chart = between(&page, "<svg class=\"msc\"", "</svg>").expect("the chart in the DOM");
    // Its trace delivers DATA, then ACK, and the sender replies.
    assert_eq!(chart.matches("class=\"delivery\"").count(), 2, "{chart}");
    assert!(chart.contains("REPLY r0"), "{chart}");
    let screenshot = dir.path().join("world.png");
    run_chromium(&[
        "--window-size=1200,2400",
        &format!("--screenshot={}", screenshot.display()),
        &url,
    ]);
    let (pixels, width) = rgb_pixels(&screenshot);
    assert_eq!(width, 1200);
    let white = pixels.iter().filter(|p| **p == [255, 255, 255]).count();
    assert!(
        white < pixels.len() * 99 / 100,
        "the screenshot is blank: {white} of {} pixels white",
        pixels.len()
    );
    let mut colours: Vec<[u8; 3]> = pixels.clone();
    colours.sort_unstable();
    colours.dedup();
    assert!(
        colours.len() > 20,
        "text and tables: {} colours",
        colours.len()
    );
    // The reply's mark on the chart is a 10x10 square of #2c6fbb (the
    // chart's colour for replies), a colour nothing else on the page uses.
    let reply_mark = pixels.iter().filter(|p| **p == [0x2c, 0x6f, 0xbb]).count();
    assert!(
        reply_mark >= 50,
        "the chart's reply mark is drawn: {reply_mark} pixels of #2c6fbb"
    );
}
