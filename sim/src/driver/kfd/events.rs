//! KFD events: what ROCR's signals and its async-event thread sleep on.
//!
//! Semantics follow the Linux driver (`kfd_events.c`):
//! - Signal (and debug) events get ids `0..4096`, which double as their slot in
//!   the events page; other events (memory exceptions, …) get ids from
//!   `0x8000_0000`.
//! - Setting an auto-reset event that has waiters activates every current
//!   waiter and leaves the event unsignaled; without waiters it stays signaled
//!   until a wait consumes it.
//! - A wait with a non-zero timeout consumes the auto-reset events it finds
//!   signaled; a wait with timeout 0 only polls and consumes nothing, so
//!   several pollers all see a signal (our design, ARCHITECTURE.md §5).
//! - Waits really block (a condition variable), so ROCR's async thread, which
//!   waits with an effectively infinite timeout, sleeps instead of spinning.
//! - Event ages (KFD 1.14): every set of an event increments its age (never
//!   wrapping back to 0 or 1). A waiter that passes a non-zero
//!   `last_event_age` for a signal event that differs from the current age
//!   has missed a signal: the wait completes at once. A completed wait writes
//!   the current age back for such events, so ROCm 6.x's threads waiting on
//!   one signal each notice every set instead of racing for one.

use proto::abi::kfd::{
    EventData, MemoryExceptionData, KFD_EVENT_TIMEOUT_INFINITE, KFD_IOC_EVENT_DEBUG_EVENT, KFD_IOC_EVENT_MEMORY,
    KFD_IOC_EVENT_SIGNAL, KFD_IOC_WAIT_RESULT_COMPLETE, KFD_IOC_WAIT_RESULT_FAIL, KFD_IOC_WAIT_RESULT_TIMEOUT,
    KFD_SIGNAL_EVENT_LIMIT,
};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// First id of non-signal events (kernel `KFD_FIRST_NONSIGNAL_EVENT_ID`).
pub const FIRST_NONSIGNAL_EVENT_ID: u32 = 0x8000_0000;

/// What an unsignaled slot of the events page holds.
pub const UNSIGNALED_EVENT_SLOT: u64 = u64::MAX;

/// Errors of event ioctls.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    #[error("no event with id {0}")]
    NoSuchEvent(u32),
    #[error("event type {0} is not supported")]
    BadType(u32),
    #[error("all {0} signal event slots are in use")]
    NoSlots(u32),
    #[error("the process is closing")]
    Closing,
}

/// The outcome of a wait, as WAIT_EVENTS reports it in `wait_result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitResult {
    Complete,
    Timeout,
    Fail,
}

impl WaitResult {
    pub fn to_abi(self) -> u32 {
        match self {
            WaitResult::Complete => KFD_IOC_WAIT_RESULT_COMPLETE,
            WaitResult::Timeout => KFD_IOC_WAIT_RESULT_TIMEOUT,
            WaitResult::Fail => KFD_IOC_WAIT_RESULT_FAIL,
        }
    }
}

/// What CREATE_EVENT returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreatedEvent {
    pub event_id: u32,
    pub slot_index: u32,
    pub trigger_data: u32,
    /// Whether this event has a slot in the events page.
    pub has_slot: bool,
}

#[derive(Debug)]
struct Event {
    ty: u32,
    auto_reset: bool,
    signaled: bool,
    /// Incremented by every set (KFD 1.14 event age); starts at 1.
    age: u64,
    /// Ids of waiters currently blocked on this event.
    waiters: Vec<u64>,
    memory_exception: Option<MemoryExceptionData>,
}

#[derive(Debug)]
struct Waiter {
    /// One flag per event of the wait, in the caller's order.
    events: Vec<(u32, bool)>,
}

#[derive(Debug, Default)]
struct State {
    events: BTreeMap<u32, Event>,
    waiters: HashMap<u64, Waiter>,
    next_waiter: u64,
    next_nonsignal_id: u32,
    closing: bool,
}

/// The events of one KFD process.
#[derive(Debug, Default)]
pub struct EventTable {
    state: Mutex<State>,
    wake: Condvar,
}

impl EventTable {
    pub fn new() -> Self {
        EventTable::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// CREATE_EVENT.
    pub fn create(&self, ty: u32, auto_reset: bool) -> Result<CreatedEvent, EventError> {
        let mut st = self.lock();
        if st.closing {
            return Err(EventError::Closing);
        }
        let is_signal = ty == KFD_IOC_EVENT_SIGNAL || ty == KFD_IOC_EVENT_DEBUG_EVENT;
        if ty > KFD_IOC_EVENT_MEMORY {
            return Err(EventError::BadType(ty));
        }
        let id = if is_signal {
            (0..KFD_SIGNAL_EVENT_LIMIT)
                .find(|id| !st.events.contains_key(id))
                .ok_or(EventError::NoSlots(KFD_SIGNAL_EVENT_LIMIT))?
        } else {
            let start = st.next_nonsignal_id.max(FIRST_NONSIGNAL_EVENT_ID);
            let id = (start..=u32::MAX)
                .chain(FIRST_NONSIGNAL_EVENT_ID..start)
                .find(|id| !st.events.contains_key(id))
                .ok_or(EventError::NoSlots(u32::MAX - FIRST_NONSIGNAL_EVENT_ID))?;
            st.next_nonsignal_id = id.wrapping_add(1);
            id
        };
        st.events
            .insert(id, Event { ty, auto_reset, signaled: false, age: 1, waiters: Vec::new(), memory_exception: None });
        Ok(CreatedEvent {
            event_id: id,
            slot_index: if is_signal { id } else { 0 },
            trigger_data: if is_signal { id } else { 0 },
            has_slot: is_signal,
        })
    }

    /// DESTROY_EVENT. Waiters blocked on it stay blocked on their other events
    /// (the kernel does the same); a waiter on only this event times out.
    pub fn destroy(&self, id: u32) -> Result<(), EventError> {
        let mut st = self.lock();
        st.events.remove(&id).map(|_| ()).ok_or(EventError::NoSuchEvent(id))
    }

    /// SET_EVENT, and the GPU's interrupt for an event id.
    pub fn set(&self, id: u32) -> Result<(), EventError> {
        let mut st = self.lock();
        Self::set_locked(&mut st, id)?;
        drop(st);
        self.wake.notify_all();
        Ok(())
    }

    fn set_locked(st: &mut State, id: u32) -> Result<(), EventError> {
        let State { events, waiters, .. } = st;
        let ev = events.get_mut(&id).ok_or(EventError::NoSuchEvent(id))?;
        ev.signaled = !ev.auto_reset || ev.waiters.is_empty();
        // Ages 0 ("no ages") and 1 (a fresh event) are never reached again.
        ev.age = ev.age.checked_add(1).unwrap_or(2);
        for w in &ev.waiters {
            if let Some(waiter) = waiters.get_mut(w) {
                for (eid, activated) in waiter.events.iter_mut() {
                    if *eid == id {
                        *activated = true;
                    }
                }
            }
        }
        Ok(())
    }

    /// RESET_EVENT.
    pub fn reset(&self, id: u32) -> Result<(), EventError> {
        let mut st = self.lock();
        let ev = st.events.get_mut(&id).ok_or(EventError::NoSuchEvent(id))?;
        ev.signaled = false;
        Ok(())
    }

    /// Signals every memory-exception event with the fault's details (what the
    /// driver does on a GPU VM fault). Returns how many events were signaled.
    pub fn signal_memory_fault(&self, data: MemoryExceptionData) -> usize {
        let mut st = self.lock();
        let ids: Vec<u32> = st.events.iter().filter(|(_, e)| e.ty == KFD_IOC_EVENT_MEMORY).map(|(&id, _)| id).collect();
        for &id in &ids {
            if let Some(ev) = st.events.get_mut(&id) {
                ev.memory_exception = Some(data);
            }
            let _ = Self::set_locked(&mut st, id);
        }
        drop(st);
        self.wake.notify_all();
        ids.len()
    }

    /// Wakes every waiter with FAIL and refuses new waits: the process is
    /// going away (its fd closed, or its daemon connection dropped).
    pub fn close(&self) {
        self.lock().closing = true;
        self.wake.notify_all();
    }

    /// Number of events that exist.
    pub fn len(&self) -> usize {
        self.lock().events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// WAIT_EVENTS. `events` is the caller's array: `event_id` in, exception
    /// data out for signaled memory events. `timeout_ms` follows the ioctl
    /// (0 = poll, 0xffffffff = forever).
    pub fn wait(&self, events: &mut [EventData], wait_all: bool, timeout_ms: u32) -> Result<WaitResult, EventError> {
        let mut st = self.lock();
        if st.closing {
            return Ok(WaitResult::Fail);
        }
        for e in events.iter() {
            if !st.events.contains_key(&e.event_id) {
                return Err(EventError::NoSuchEvent(e.event_id));
            }
        }
        let poll_only = timeout_ms == 0;
        let mut flags: Vec<(u32, bool)> = Vec::with_capacity(events.len());
        for e in events.iter() {
            let ev = st.events.get_mut(&e.event_id).expect("checked above");
            let missed = ev.ty == KFD_IOC_EVENT_SIGNAL && e.last_event_age() != 0 && e.last_event_age() != ev.age;
            flags.push((e.event_id, ev.signaled || missed));
            if ev.signaled && ev.auto_reset && !poll_only {
                ev.signaled = false;
            }
        }
        if satisfied(&flags, wait_all) {
            copy_exception_data(&st, events, &flags);
            return Ok(WaitResult::Complete);
        }
        if poll_only {
            return Ok(WaitResult::Timeout);
        }

        let deadline = (timeout_ms != KFD_EVENT_TIMEOUT_INFINITE)
            .then(|| Instant::now().checked_add(Duration::from_millis(timeout_ms as u64)))
            .flatten();
        let waiter_id = st.next_waiter;
        st.next_waiter += 1;
        st.waiters.insert(waiter_id, Waiter { events: flags });
        for e in events.iter() {
            if let Some(ev) = st.events.get_mut(&e.event_id) {
                ev.waiters.push(waiter_id);
            }
        }

        let result = loop {
            let flags = &st.waiters[&waiter_id].events;
            if satisfied(flags, wait_all) {
                break WaitResult::Complete;
            }
            if st.closing {
                break WaitResult::Fail;
            }
            st = match deadline {
                None => self.wake.wait(st).unwrap_or_else(|e| e.into_inner()),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        break WaitResult::Timeout;
                    }
                    self.wake.wait_timeout(st, deadline - now).unwrap_or_else(|e| e.into_inner()).0
                }
            };
        };

        let waiter = st.waiters.remove(&waiter_id).expect("registered above");
        for (id, _) in &waiter.events {
            if let Some(ev) = st.events.get_mut(id) {
                ev.waiters.retain(|&w| w != waiter_id);
            }
        }
        if result == WaitResult::Complete {
            copy_exception_data(&st, events, &waiter.events);
        }
        Ok(result)
    }
}

fn satisfied(flags: &[(u32, bool)], wait_all: bool) -> bool {
    if wait_all {
        flags.iter().all(|&(_, a)| a)
    } else {
        flags.iter().any(|&(_, a)| a)
    }
}

/// What a completed wait copies back for each activated event: a memory
/// exception's details, or a signal event's current age when the caller
/// passed one.
fn copy_exception_data(st: &State, events: &mut [EventData], flags: &[(u32, bool)]) {
    for (e, &(_, activated)) in events.iter_mut().zip(flags) {
        let Some(ev) = st.events.get(&e.event_id).filter(|_| activated) else { continue };
        if let Some(data) = ev.memory_exception {
            e.memory_exception_data = data;
        } else if ev.ty == KFD_IOC_EVENT_SIGNAL && e.last_event_age() != 0 {
            e.set_last_event_age(ev.age);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;

    fn ev(id: u32) -> EventData {
        EventData { event_id: id, ..Default::default() }
    }

    #[test]
    fn signal_ids_are_slots_and_others_use_the_high_range() {
        let t = EventTable::new();
        let mem = t.create(KFD_IOC_EVENT_MEMORY, false).unwrap();
        assert_eq!(mem.event_id, FIRST_NONSIGNAL_EVENT_ID);
        assert!(!mem.has_slot);
        let a = t.create(KFD_IOC_EVENT_SIGNAL, true).unwrap();
        let b = t.create(KFD_IOC_EVENT_SIGNAL, true).unwrap();
        assert_eq!((a.event_id, a.slot_index, b.event_id), (0, 0, 1));
        t.destroy(0).unwrap();
        assert_eq!(t.create(KFD_IOC_EVENT_SIGNAL, false).unwrap().event_id, 0);
        assert_eq!(t.destroy(77), Err(EventError::NoSuchEvent(77)));
        assert_eq!(t.create(99, false), Err(EventError::BadType(99)));
    }

    #[test]
    fn poll_sees_a_signal_without_consuming_it() {
        let t = EventTable::new();
        let id = t.create(KFD_IOC_EVENT_SIGNAL, true).unwrap().event_id;
        assert_eq!(t.wait(&mut [ev(id)], false, 0), Ok(WaitResult::Timeout));
        t.set(id).unwrap();
        assert_eq!(t.wait(&mut [ev(id)], false, 0), Ok(WaitResult::Complete));
        assert_eq!(t.wait(&mut [ev(id)], false, 0), Ok(WaitResult::Complete));
        // A real wait consumes the auto-reset event...
        assert_eq!(t.wait(&mut [ev(id)], false, 10), Ok(WaitResult::Complete));
        // ...so the next one times out.
        assert_eq!(t.wait(&mut [ev(id)], false, 10), Ok(WaitResult::Timeout));
    }

    #[test]
    fn manual_reset_event_stays_signaled_until_reset() {
        let t = EventTable::new();
        let id = t.create(KFD_IOC_EVENT_SIGNAL, false).unwrap().event_id;
        t.set(id).unwrap();
        assert_eq!(t.wait(&mut [ev(id)], false, 10), Ok(WaitResult::Complete));
        assert_eq!(t.wait(&mut [ev(id)], false, 10), Ok(WaitResult::Complete));
        t.reset(id).unwrap();
        assert_eq!(t.wait(&mut [ev(id)], false, 0), Ok(WaitResult::Timeout));
    }

    #[test]
    fn wait_all_needs_every_event() {
        let t = EventTable::new();
        let a = t.create(KFD_IOC_EVENT_SIGNAL, false).unwrap().event_id;
        let b = t.create(KFD_IOC_EVENT_SIGNAL, false).unwrap().event_id;
        t.set(a).unwrap();
        assert_eq!(t.wait(&mut [ev(a), ev(b)], true, 5), Ok(WaitResult::Timeout));
        assert_eq!(t.wait(&mut [ev(a), ev(b)], false, 5), Ok(WaitResult::Complete));
        t.set(b).unwrap();
        assert_eq!(t.wait(&mut [ev(a), ev(b)], true, 5), Ok(WaitResult::Complete));
    }

    #[test]
    fn unknown_event_in_wait_is_an_error() {
        let t = EventTable::new();
        assert_eq!(t.wait(&mut [ev(5)], false, 0), Err(EventError::NoSuchEvent(5)));
    }

    #[test]
    fn blocked_waiters_all_wake_and_auto_reset_is_not_left_signaled() {
        let t = Arc::new(EventTable::new());
        let id = t.create(KFD_IOC_EVENT_SIGNAL, true).unwrap().event_id;
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let t = t.clone();
                thread::spawn(move || t.wait(&mut [ev(id)], false, KFD_EVENT_TIMEOUT_INFINITE))
            })
            .collect();
        // Wait until all three are registered as waiters.
        while t.lock().waiters.len() < 3 {
            thread::yield_now();
        }
        t.set(id).unwrap();
        for w in waiters {
            assert_eq!(w.join().unwrap(), Ok(WaitResult::Complete));
        }
        // The signal went to the waiters, not into the event.
        assert_eq!(t.wait(&mut [ev(id)], false, 0), Ok(WaitResult::Timeout));
    }

    #[test]
    fn close_fails_blocked_waits() {
        let t = Arc::new(EventTable::new());
        let id = t.create(KFD_IOC_EVENT_SIGNAL, true).unwrap().event_id;
        let t2 = t.clone();
        let w = thread::spawn(move || t2.wait(&mut [ev(id)], false, KFD_EVENT_TIMEOUT_INFINITE));
        while t.lock().waiters.is_empty() {
            thread::yield_now();
        }
        t.close();
        assert_eq!(w.join().unwrap(), Ok(WaitResult::Fail));
        assert_eq!(t.wait(&mut [ev(id)], false, 0), Ok(WaitResult::Fail));
    }

    #[test]
    fn memory_fault_signals_memory_events_with_data() {
        let t = EventTable::new();
        let mem = t.create(KFD_IOC_EVENT_MEMORY, false).unwrap().event_id;
        let sig = t.create(KFD_IOC_EVENT_SIGNAL, false).unwrap().event_id;
        let mut data = MemoryExceptionData { va: 0xdead_0000, gpu_id: 7, ..Default::default() };
        data.failure.not_present = 1;
        assert_eq!(t.signal_memory_fault(data), 1);
        let mut out = [ev(mem), ev(sig)];
        assert_eq!(t.wait(&mut out, false, 0), Ok(WaitResult::Complete));
        assert_eq!(out[0].memory_exception_data.va, 0xdead_0000);
        assert_eq!(out[0].memory_exception_data.failure.not_present, 1);
        assert_eq!(out[1].memory_exception_data.va, 0);
    }

    fn aged(id: u32, age: u64) -> EventData {
        let mut e = ev(id);
        e.set_last_event_age(age);
        e
    }

    #[test]
    fn a_missed_signal_completes_a_wait_that_passes_the_old_age() {
        let t = EventTable::new();
        let id = t.create(KFD_IOC_EVENT_SIGNAL, true).unwrap().event_id;
        // Nothing happened since age 1 (a fresh event): a poll finds nothing.
        assert_eq!(t.wait(&mut [aged(id, 1)], false, 0), Ok(WaitResult::Timeout));
        t.set(id).unwrap();
        let mut out = [aged(id, 1)];
        assert_eq!(t.wait(&mut out, false, 1000), Ok(WaitResult::Complete));
        assert_eq!(out[0].last_event_age(), 2, "the current age comes back");
        // Caught up: the next wait with the new age sleeps until the next set.
        assert_eq!(t.wait(&mut [aged(id, 2)], false, 20), Ok(WaitResult::Timeout));
        // Without ages (0) the old rules hold: the auto-reset signal was consumed.
        assert_eq!(t.wait(&mut [ev(id)], false, 0), Ok(WaitResult::Timeout));
    }

    #[test]
    fn every_aged_waiter_on_one_event_sees_one_set() {
        let t = Arc::new(EventTable::new());
        let id = t.create(KFD_IOC_EVENT_SIGNAL, true).unwrap().event_id;
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let t = t.clone();
                thread::spawn(move || {
                    let mut out = [aged(id, 1)];
                    let r = t.wait(&mut out, false, KFD_EVENT_TIMEOUT_INFINITE);
                    (r, out[0].last_event_age())
                })
            })
            .collect();
        while t.lock().waiters.len() < 3 {
            thread::yield_now();
        }
        t.set(id).unwrap();
        for w in waiters {
            assert_eq!(w.join().unwrap(), (Ok(WaitResult::Complete), 2));
        }
    }

    #[test]
    fn ages_never_return_to_0_or_1() {
        let t = EventTable::new();
        let id = t.create(KFD_IOC_EVENT_SIGNAL, false).unwrap().event_id;
        t.lock().events.get_mut(&id).unwrap().age = u64::MAX;
        t.set(id).unwrap();
        let mut out = [aged(id, u64::MAX)];
        assert_eq!(t.wait(&mut out, false, 0), Ok(WaitResult::Complete));
        assert_eq!(out[0].last_event_age(), 2);
    }

    #[test]
    fn timed_wait_really_waits() {
        let t = EventTable::new();
        let id = t.create(KFD_IOC_EVENT_SIGNAL, true).unwrap().event_id;
        let start = Instant::now();
        assert_eq!(t.wait(&mut [ev(id)], false, 30), Ok(WaitResult::Timeout));
        assert!(start.elapsed() >= Duration::from_millis(30));
    }
}
