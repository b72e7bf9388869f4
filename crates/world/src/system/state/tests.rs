//! Round trips, canonical forms and the partial-successor encoding of the
//! World's state.

use std::num::NonZeroU64;

use super::node::{decode_core_into, header, CORE_BLOCK};
use super::*;
use crate::core::abi::PAYLOAD_MAX;
use crate::system::spec::WorldSpec;

impl Persist {
    fn default_for_test() -> Persist {
        Persist {
            offset: 3,
            bytes: Payload::new(&[1, 2]).unwrap(),
        }
    }
}

#[test]
fn state_round_trips() {
    let state = WorldState {
        nodes: vec![NodeState {
            core: vec![1, 2, 3],
            crashed: false,
            clock: 4,
            timers: 1,
            wakes: 0,
            persists: vec![Persist {
                offset: 0,
                bytes: Payload::new(&[9]).unwrap(),
            }],
            deadlines: vec![Deadline { timer: 0, at: 7 }],
            choices: vec![Choice { id: 2, k: 3 }],
        }],
        net: [Packet {
            src: 0,
            dst: 1,
            msg: Payload::new(b"hi").unwrap(),
            count: 2,
            surplus: true,
        }]
        .into_iter()
        .collect(),
        cut_links: vec![(1, 0)],
        budgets: [1; BUDGETS],
        issued: 1,
        ghost: Ghost::default(),
        lost_in_crash: vec![0],
        ..WorldState::default()
    };
    assert_eq!(WorldState::decode_exact(&state.to_bytes()).unwrap(), state);
    assert!(!state.link_up(1, 0) && state.link_up(0, 1) && state.link_up(1, 2));
    assert!(!state.pair_up(0, 1) && state.pair_up(1, 2));
}

#[test]
fn a_copy_into_larger_memory_equals_its_source() {
    let source = WorldState {
        nodes: vec![NodeState {
            core: vec![1, 2, 3],
            clock: 7,
            persists: vec![Persist::default_for_test()],
            ..NodeState::default()
        }],
        issued: 2,
        lost_in_crash: vec![1],
        cut_links: vec![(0, 1)],
        ..WorldState::default()
    };
    let mut bigger = source.clone();
    bigger.nodes.push(NodeState {
        core: vec![9; 40],
        ..NodeState::default()
    });
    bigger.nodes[0].core.extend([4, 5]);
    bigger.nodes[0].persists.push(Persist::default_for_test());
    bigger.clone_from(&source);
    assert_eq!(bigger, source);
}

/// The flight recorder's stamp names the state as it was recorded:
/// every way the World or the search changes a state forgets it, and a
/// copy never has one.
#[test]
fn a_state_forgets_its_recording_when_it_changes() {
    let recorded = |state: &WorldState| {
        state.set_recorded_as(NonZeroU64::new(7).unwrap());
        state.recorded_as().is_some()
    };
    let parent = WorldState {
        nodes: vec![NodeState::default(), NodeState::default()],
        issued: 1,
        ..WorldState::default()
    };
    let bytes = parent.to_bytes();
    let mut state = WorldState::default();
    assert!(recorded(&state));
    state.decode_exact_in_place(&bytes).unwrap();
    assert_eq!(state.recorded_as(), None, "decoded into");
    assert!(recorded(&state));
    assert_eq!(state.clone().recorded_as(), None, "a copy");
    state.clone_from(&parent);
    assert_eq!(state.recorded_as(), None, "copied into");
    assert!(recorded(&state));
    state.copy_for_step(&parent, Some(0));
    assert_eq!(state.recorded_as(), None, "made a successor");
    state.mark_step_successor(Some(0));
    assert!(recorded(&state));
    state.complete_from(&parent);
    assert_eq!(state.recorded_as(), None, "completed");
    assert!(recorded(&state));
    state.set_cut(0, 1, true);
    assert_eq!(state.recorded_as(), None, "a link cut");
}

#[test]
fn deadlines_stay_sorted_and_decide_when_a_timer_is_due() {
    let mut node = NodeState {
        core: vec![],
        crashed: false,
        clock: 3,
        timers: 0b1011,
        wakes: 0,
        persists: vec![],
        deadlines: vec![],
        choices: vec![],
    };
    node.set_deadline(3, Some(5));
    node.set_deadline(0, Some(3));
    node.set_deadline(3, Some(4));
    assert_eq!(
        node.deadlines,
        vec![Deadline { timer: 0, at: 3 }, Deadline { timer: 3, at: 4 }]
    );
    assert!(node.timer_due(0), "the clock has reached 3");
    assert!(node.timer_due(1), "no deadline: any moment");
    assert!(!node.timer_due(3), "4 is not reached at 3");
    node.set_deadline(0, None);
    node.set_deadline(1, None);
    assert_eq!(node.deadlines, vec![Deadline { timer: 3, at: 4 }]);
}

/// Core states of every length around the word and bitmap boundaries,
/// with zero and non-zero words in every position.
fn core_patterns() -> Vec<Vec<u8>> {
    let mut cores = Vec::new();
    for len in [0, 1, 7, 8, 9, 31, 32, 33, 255, 256, 257, 600] {
        for pattern in 0..8u32 {
            let core: Vec<u8> = (0..len)
                .map(|at| match (at / 8 + pattern as usize) % 3 {
                    0 => 0,
                    1 => (at % 8 == 7) as u8,
                    _ => at as u8 | 1,
                })
                .collect();
            cores.push(core);
        }
    }
    cores
}

#[test]
fn core_states_round_trip_in_sparse_form() {
    let mut recycled = NodeState {
        core: vec![0xff; 200],
        persists: vec![Persist::default_for_test(); 3],
        ..NodeState::default()
    };
    for core in core_patterns() {
        let node = NodeState {
            core,
            ..NodeState::default()
        };
        let bytes = node.to_bytes();
        assert_eq!(NodeState::decode_exact(&bytes).unwrap(), node);
        recycled.decode_exact_in_place(&bytes).unwrap();
        assert_eq!(recycled, node, "decoded into recycled memory");
        let zero_blocks = node
            .core
            .chunks(CORE_BLOCK)
            .filter(|b| b.iter().all(|&b| b == 0));
        let sparse = 4 + node.core.len().div_ceil(CORE_BLOCK * 8) + node.core.len()
            - zero_blocks.map(<[u8]>::len).sum::<usize>();
        assert_eq!(bytes.len(), sparse + 1, "zero blocks are left out");
    }
}

#[test]
fn sparse_bytes_no_core_state_writes_are_refused() {
    // 40 bytes: two blocks, the second 8 bytes long.
    let mut good = vec![40, 0, 0, 0, 0b10, 5];
    good.extend([0; 7]);
    let mut core = Vec::new();
    decode_core_into(&mut Decoder::new(&good), &mut core).unwrap();
    let mut expected = vec![0; 32];
    expected.extend(&good[5..]);
    assert_eq!(core, expected);
    let mut zero_block = good.clone();
    zero_block[5] = 0;
    let mut past_the_end = good.clone();
    past_the_end[4] = 0b110;
    let missing = &good[..12];
    for bad in [&zero_block[..], &past_the_end, missing] {
        assert!(
            decode_core_into(&mut Decoder::new(bad), &mut core).is_err(),
            "{bad:?}"
        );
    }
}

/// A node's fields at their default are left out of its encoding, and a
/// header that marks a field present at its default, or a bit no field
/// has, is refused: one node, one encoding.
#[test]
fn node_fields_at_their_default_are_left_out_and_never_read() {
    let quiet = NodeState {
        core: vec![0; 8],
        ..NodeState::default()
    };
    // Core length, a bitmap byte with no block, the header.
    assert_eq!(quiet.to_bytes(), [8, 0, 0, 0, 0, 0]);
    let busy = NodeState {
        crashed: true,
        timers: 0b10,
        choices: vec![Choice { id: 1, k: 2 }],
        ..quiet.clone()
    };
    let bits = header::CRASHED | header::TIMERS | header::CHOICES;
    assert_eq!(
        busy.to_bytes(),
        [8, 0, 0, 0, 0, bits, 2, 0, 0, 0, 1, 0, 0, 0, 1, 2]
    );
    assert_eq!(NodeState::decode_exact(&busy.to_bytes()).unwrap(), busy);
    let refused: [&[u8]; 4] = [
        &[8, 0, 0, 0, 0, 1 << 7],
        &[8, 0, 0, 0, 0, header::CLOCK, 0, 0, 0, 0],
        &[8, 0, 0, 0, 0, header::PERSISTS, 0, 0, 0, 0],
        &[8, 0, 0, 0, 0, header::WAKES, 1, 0],
    ];
    for bytes in refused {
        assert!(NodeState::decode_exact(bytes).is_err(), "{bytes:?}");
    }
}

/// Every state a small World reaches (every successor, before any
/// deduplication; the reqack core with crashes, restarts, duplicates and
/// drops): it decodes back to itself, also into a recycled state; two
/// states with the same bytes are the same state (their derived
/// `PartialEq`), and one state has one encoding however its memory was
/// made (fresh, copied into a larger state, decoded in place).
#[test]
fn world_encoding_is_canonical_over_a_reachable_state_space() {
    use std::collections::HashMap;
    use std::sync::Arc;

    use crate::example_cores::reqack::ReqAck;
    use crate::system::env::Env;

    let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 3).unwrap();
    spec.set_all(&["requests=1", "crashes=1", "restarts=1", "dups=1", "drops=1"])
        .unwrap();
    let env = Env::new(spec);
    let init = env.init(&mut ()).unwrap();
    let mut by_bytes: HashMap<Vec<u8>, WorldState> = HashMap::new();
    let mut by_state: HashMap<String, Vec<u8>> = HashMap::new();
    let mut frontier = vec![init];
    let mut recycled = WorldState::default();
    let mut actions = Vec::new();
    let mut successors = 0;
    while let Some(state) = frontier.pop() {
        actions.clear();
        env.actions(&state, &mut actions);
        for action in &actions {
            let mut next = WorldState::default();
            if !env.next(&state, action, &mut next, &mut ()).unwrap() {
                continue;
            }
            successors += 1;
            let bytes = next.to_bytes();
            assert_eq!(WorldState::decode_exact(&bytes).unwrap(), next);
            recycled.decode_exact_in_place(&bytes).unwrap();
            assert_eq!(recycled, next, "decoded in place");
            assert_eq!(
                recycled.to_bytes(),
                bytes,
                "decoded in place, encoded again"
            );
            let mut copy = frontier.first().cloned().unwrap_or_default();
            copy.clone_from(&next);
            assert_eq!(copy.to_bytes(), bytes, "copied into other memory");
            let named = by_state.entry(format!("{next:?}")).or_insert(bytes.clone());
            assert_eq!(*named, bytes, "one state, two encodings: {next:?}");
            match by_bytes.get(&bytes) {
                Some(seen) => assert_eq!(*seen, next, "two states, one encoding"),
                None => {
                    by_bytes.insert(bytes, next.clone());
                    frontier.push(next);
                }
            }
        }
    }
    assert!(by_bytes.len() > 1000, "{} states", by_bytes.len());
    assert!(successors > by_bytes.len());
}

#[test]
fn a_packet_encodes_as_its_fields_in_order() {
    let packet = Packet {
        src: 1,
        dst: 2,
        msg: Payload::new(&[7, 8]).unwrap(),
        count: 3,
        surplus: true,
    };
    let mut fields = Vec::new();
    (1u8, 2u8, packet.msg, 3u8, true).encode(&mut fields);
    assert_eq!(packet.to_bytes(), fields);
    assert_eq!(Packet::decode_exact(&fields).unwrap(), packet);
    fields[6] = 2;
    assert!(Packet::decode_exact(&fields).is_err(), "a bool is 0 or 1");
}

/// Packets and history entries are written in one pass over a slice;
/// the bytes are those of encoding each one's fields in turn, for every
/// payload length.
#[test]
fn records_in_a_sequence_encode_as_each_alone() {
    let payloads: Vec<Payload> = (0..=PAYLOAD_MAX)
        .map(|len| Payload::new(&vec![len as u8 | 1; len]).unwrap())
        .collect();
    let packets: Vec<Packet> = payloads
        .iter()
        .enumerate()
        .map(|(at, &msg)| Packet {
            src: at as u8,
            dst: 2,
            msg,
            count: 3,
            surplus: at % 2 == 0,
        })
        .collect();
    let entries: Vec<GhostEntry> = payloads
        .iter()
        .enumerate()
        .map(|(at, &payload)| GhostEntry {
            kind: GhostKind::Reply,
            request: at as u32 * 1000,
            node: 1,
            payload,
        })
        .collect();
    let one_by_one = |encode_each: &dyn Fn(&mut Vec<u8>)| {
        let mut out = vec![0xaa];
        encode_each(&mut out);
        out
    };
    let packet_fields = |p: &Packet| (p.src, p.dst, p.msg, p.count, p.surplus);
    let entry_fields = |e: &GhostEntry| (e.kind, e.request, e.node, e.payload);
    let mut out = vec![0xaa];
    Packet::encode_slice(&packets, &mut out);
    assert_eq!(
        out,
        one_by_one(&|out| packets.iter().for_each(|p| packet_fields(p).encode(out)))
    );
    let mut out = vec![0xaa];
    GhostEntry::encode_slice(&entries, &mut out);
    assert_eq!(
        out,
        one_by_one(&|out| entries.iter().for_each(|e| entry_fields(e).encode(out)))
    );
}

#[test]
fn oversized_payload_is_refused() {
    assert!(Payload::new(&[0; PAYLOAD_MAX + 1]).is_none());
    let mut bytes = vec![PAYLOAD_MAX as u8 + 1];
    bytes.extend([0; PAYLOAD_MAX + 1]);
    assert!(Payload::decode_exact(&bytes).is_err());
}

#[test]
fn a_ghost_entry_decodes_in_place_and_refuses_bad_bytes() {
    let entry = GhostEntry {
        kind: GhostKind::Retry,
        request: 0x0102_0304,
        node: 2,
        payload: Payload::new(b"op").unwrap(),
    };
    let bytes = entry.to_bytes();
    // Decoded over an entry that held a longer payload: nothing of it stays.
    let mut reused = GhostEntry {
        payload: Payload::new(&[9; 5]).unwrap(),
        ..entry
    };
    reused.decode_exact_in_place(&bytes).unwrap();
    assert_eq!(reused, entry);
    let history = vec![
        entry,
        GhostEntry {
            kind: GhostKind::Reply,
            ..entry
        },
    ];
    assert_eq!(
        Vec::<GhostEntry>::decode_exact(&history.to_bytes()).unwrap(),
        history
    );
    let mut bad_kind = bytes.clone();
    bad_kind[0] = 4;
    assert!(matches!(
        GhostEntry::decode_exact(&bad_kind),
        Err(DecodeError::UnknownVariant {
            offset: 0,
            tag: 4,
            ..
        })
    ));
    let mut long = bytes.clone();
    long[6] = PAYLOAD_MAX as u8 + 1;
    assert!(GhostEntry::decode_exact(&long).is_err());
    assert!(GhostEntry::decode_exact(&bytes[..bytes.len() - 1]).is_err());
    assert!(GhostEntry::decode_exact(&bytes[..5]).is_err());
}
