//! BPF timers (`struct bpf_timer` in a map value; kernel/bpf/helpers.c `bpf_timer_init`,
//! `bpf_timer_set_callback`, `bpf_timer_start`, `bpf_timer_cancel`): one-shot timers in the
//! host's clock that call a program function `(map, key, value)` when they expire. The table is
//! keyed by the `bpf_timer`'s address; the host asks which are due and runs their callbacks.

use super::maps::Map;
use super::memory::{Memory, code_index};
use super::vm::CallError;

/// Helper numbers (`enum bpf_func_id`).
pub const TIMER_INIT: i32 = 169;
pub const TIMER_SET_CALLBACK: i32 = 170;
pub const TIMER_START: i32 = 171;
pub const TIMER_CANCEL: i32 = 172;
/// `BPF_F_TIMER_ABS`: the expiry is an absolute time, not a delay.
pub const BPF_F_TIMER_ABS: u64 = 1;
/// `BPF_F_TIMER_CPU_PIN`.
pub const BPF_F_TIMER_CPU_PIN: u64 = 2;

#[derive(Clone, Debug)]
pub struct Timer {
    /// The `struct bpf_timer`'s address.
    pub addr: u64,
    pub map: u64,
    /// A region holding the element's key (the callback's second argument).
    pub key: u64,
    /// The map value holding the timer (the callback's third argument).
    pub value: u64,
    /// The callback's first instruction.
    pub callback: Option<usize>,
    pub expires: Option<u64>,
}

/// A timer that expired: what to call, with which arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due {
    pub entry: usize,
    pub args: [u64; 3],
}

#[derive(Clone, Debug, Default)]
pub struct Timers {
    pub timers: Vec<Timer>,
    /// Callbacks run so far.
    pub fired: u64,
}

fn einval(what: &str) -> CallError {
    CallError::Failed(what.to_string())
}

impl Timers {
    fn get(&mut self, addr: u64) -> Option<&mut Timer> {
        self.timers.iter_mut().find(|t| t.addr == addr)
    }

    /// Runs timer helper `id` at time `now`; `Err(Unknown)` if `id` is not one.
    pub fn call(
        &mut self,
        id: i32,
        a: [u64; 5],
        mem: &mut Memory,
        maps: &[Map],
        now: u64,
    ) -> Result<u64, CallError> {
        match id {
            TIMER_INIT => {
                if self.get(a[0]).is_some() {
                    return Ok(-16i64 as u64); // -EBUSY
                }
                let map = maps
                    .iter()
                    .find(|m| m.handle == a[1])
                    .ok_or_else(|| einval("bpf_timer_init: the second argument is not a map"))?;
                let Some((value, key)) = map.element_holding(a[0]) else {
                    return Err(einval(
                        "bpf_timer_init: the timer is not in that map's values",
                    ));
                };
                let key = mem.add("timer key", key, false);
                self.timers.push(Timer {
                    addr: a[0],
                    map: a[1],
                    key,
                    value,
                    callback: None,
                    expires: None,
                });
                Ok(0)
            }
            TIMER_SET_CALLBACK => {
                let Some(t) = self.get(a[0]) else {
                    return Ok(-22i64 as u64);
                };
                let entry = code_index(a[1]).ok_or_else(|| {
                    einval("bpf_timer_set_callback: the callback is not a function")
                })?;
                t.callback = Some(entry);
                Ok(0)
            }
            TIMER_START => {
                if a[2] & !(BPF_F_TIMER_ABS | BPF_F_TIMER_CPU_PIN) != 0 {
                    return Ok(-22i64 as u64);
                }
                let Some(t) = self.get(a[0]) else {
                    return Ok(-22i64 as u64);
                };
                if t.callback.is_none() {
                    return Ok(-22i64 as u64);
                }
                t.expires = Some(if a[2] & BPF_F_TIMER_ABS != 0 {
                    a[1]
                } else {
                    now.saturating_add(a[1])
                });
                Ok(0)
            }
            TIMER_CANCEL => match self.get(a[0]) {
                None => Ok(-22i64 as u64),
                Some(t) => Ok(t.expires.take().is_some() as u64),
            },
            _ => Err(CallError::Unknown),
        }
    }

    /// The earliest armed expiry.
    pub fn next_expiry(&self) -> Option<u64> {
        self.timers.iter().filter_map(|t| t.expires).min()
    }

    /// Takes the timers due at `now` (earliest first, then in init order), disarming each.
    pub fn take_due(&mut self, now: u64) -> Vec<Due> {
        let mut due: Vec<(u64, usize)> = self
            .timers
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.expires.filter(|&e| e <= now).map(|e| (e, i)))
            .collect();
        due.sort();
        due.into_iter()
            .filter_map(|(_, i)| {
                let t = &mut self.timers[i];
                t.expires = None;
                let entry = t.callback?;
                self.fired += 1;
                Some(Due {
                    entry,
                    args: [t.map, t.key, t.value],
                })
            })
            .collect()
    }
}
