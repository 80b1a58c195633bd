//! One receiver's channel, shared by its group's senders, with the kernel's rules for who blocks
//! and who is woken (v6.18; sources in docs/MODEL.md §18):
//! - AF_UNIX SOCK_STREAM: each message is an skb charged to the sending socket's `sk_wmem_alloc`
//!   until the reader consumes it; `sock_alloc_send_pskb` blocks while `sk_wmem_alloc >=
//!   sk_sndbuf` (= net.core.wmem_default); `unix_write_space` wakes every blocked writer once
//!   `unix_writable` (`sk_wmem_alloc << 2 <= sk_sndbuf`). `sock_def_readable` wakes a sleeping
//!   reader after each message.
//! - pipe: 16 page buffers (`PIPE_DEF_BUFFERS`); a small write merges into the last page while it
//!   has room, else takes a new page unless all 16 are used (`pipe_full`), else the writer waits
//!   (exclusive). A read that empties a page releases it and, if the pipe was full, wakes one
//!   writer; a writer that had waited wakes the next one if the pipe is not full after its write.
//!   The reader is woken if the pipe was empty (`was_empty`).
//!
//! All these wakeups are `wake_up_interruptible_sync_poll`: `WF_SYNC`.

use crate::workload::TaskId;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Socket,
    Pipe,
}

/// net.core.wmem_default = SK_WMEM_MAX on 64-bit: 212,992 bytes.
pub const WMEM_DEFAULT: u32 = 212_992;
/// `skb->truesize` of one 100-byte AF_UNIX stream message: 100 B of data + ≈576 B of sk_buff and
/// skb_shared_info overhead.
pub const MSG_TRUESIZE: u32 = 100 + 576;
/// PIPE_DEF_BUFFERS: a pipe's 16 page buffers.
pub const PIPE_DEF_BUFFERS: usize = 16;
/// 100-byte messages merged into one 4096-byte page: ⌊4096 / 100⌋.
pub const PIPE_MSGS_PER_PAGE: u32 = 4096 / 100;

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Socket => "socket",
            Transport::Pipe => "pipe",
        }
    }
}

pub struct Channel {
    transport: Transport,
    reader: TaskId,
    /// The reader sleeps on the channel (`wq_has_sleeper`): the next write wakes it.
    reader_waiting: bool,
    /// Readable messages: when and by whom each was written.
    queue: VecDeque<(u64, TaskId)>,
    /// Writers asleep on space, in the order they went to sleep.
    writers: VecDeque<TaskId>,
    /// Writers woken from `writers` that have not written since (pipe: `wake_next_writer`).
    woken: Vec<TaskId>,
    /// Socket: messages charged to `sk_wmem_alloc` (being written or queued).
    wmem_msgs: u32,
    /// Pipe: the page buffers, each (messages written into it, messages not yet read).
    pages: VecDeque<(u32, u32)>,
}

impl Channel {
    pub fn new(transport: Transport, reader: TaskId) -> Channel {
        Channel {
            transport,
            reader,
            reader_waiting: false,
            queue: VecDeque::new(),
            writers: VecDeque::new(),
            woken: Vec::new(),
            wmem_msgs: 0,
            pages: VecDeque::new(),
        }
    }

    /// Messages the channel holds at most (the sender blocks on the next one).
    #[cfg(test)]
    pub fn capacity(transport: Transport) -> u32 {
        match transport {
            Transport::Socket => WMEM_DEFAULT.div_ceil(MSG_TRUESIZE),
            Transport::Pipe => PIPE_DEF_BUFFERS as u32 * PIPE_MSGS_PER_PAGE,
        }
    }

    /// A write starts: takes the message's space, or queues `writer` asleep on the channel.
    pub fn reserve(&mut self, writer: TaskId) -> bool {
        let ok = match self.transport {
            Transport::Socket => self.wmem_msgs * MSG_TRUESIZE < WMEM_DEFAULT,
            Transport::Pipe => {
                matches!(self.pages.back(), Some(&(w, _)) if w < PIPE_MSGS_PER_PAGE)
                    || self.pages.len() < PIPE_DEF_BUFFERS
            }
        };
        if !ok {
            self.woken.retain(|&w| w != writer);
            self.writers.push_back(writer);
            return false;
        }
        match self.transport {
            Transport::Socket => self.wmem_msgs += 1,
            Transport::Pipe => match self.pages.back_mut() {
                Some((w, left)) if *w < PIPE_MSGS_PER_PAGE => {
                    *w += 1;
                    *left += 1;
                }
                _ => self.pages.push_back((1, 1)),
            },
        }
        true
    }

    /// A write ends: the message is readable; wakeups to issue go to `out` (task, sync).
    pub fn commit(&mut self, now: u64, writer: TaskId, out: &mut VecDeque<(TaskId, bool)>) {
        self.queue.push_back((now, writer));
        if std::mem::take(&mut self.reader_waiting) {
            out.push_back((self.reader, true));
        }
        if let Some(i) = self.woken.iter().position(|&w| w == writer) {
            self.woken.swap_remove(i);
            if self.transport == Transport::Pipe && self.pages.len() < PIPE_DEF_BUFFERS {
                self.wake_writers(1, out);
            }
        }
    }

    /// The receiver.
    pub fn reader(&self) -> TaskId {
        self.reader
    }

    /// Pipe: the last `reserve` took a new page buffer (`pipe->head` moves).
    pub fn last_write_took_page(&self) -> bool {
        self.transport == Transport::Pipe && matches!(self.pages.back(), Some(&(1, _)))
    }

    /// Pipe: the next read empties its page buffer (`pipe->tail` moves).
    pub fn next_read_drains(&self) -> bool {
        self.transport == Transport::Pipe && matches!(self.pages.front(), Some(&(_, 1)))
    }

    /// The reader goes to sleep on the empty channel.
    pub fn wait_reader(&mut self) {
        self.reader_waiting = true;
    }

    /// Who wrote the next readable message.
    pub fn front_writer(&self) -> Option<TaskId> {
        self.queue.front().map(|m| m.1)
    }

    /// A read ends: the message leaves the channel (returns when it was written); writers to wake
    /// go to `out`.
    pub fn consume(&mut self, out: &mut VecDeque<(TaskId, bool)>) -> Option<u64> {
        let (at, _) = self.queue.pop_front()?;
        match self.transport {
            Transport::Socket => {
                self.wmem_msgs -= 1;
                if (self.wmem_msgs * MSG_TRUESIZE) << 2 <= WMEM_DEFAULT {
                    self.wake_writers(usize::MAX, out);
                }
            }
            Transport::Pipe => {
                let was_full = self.pages.len() >= PIPE_DEF_BUFFERS;
                if let Some((_, left)) = self.pages.front_mut() {
                    *left -= 1;
                    if *left == 0 {
                        self.pages.pop_front();
                        if was_full {
                            self.wake_writers(1, out);
                        }
                    }
                }
            }
        }
        Some(at)
    }

    fn wake_writers(&mut self, n: usize, out: &mut VecDeque<(TaskId, bool)>) {
        for _ in 0..n {
            let Some(w) = self.writers.pop_front() else {
                return;
            };
            self.woken.push(w);
            out.push_back((w, true));
        }
    }
}
