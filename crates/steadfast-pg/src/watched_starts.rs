//! Starts of new instances made by this process, watched for their end from before they
//! committed, so that a wait right after a start need not read the status first.
//!
//! A wait subscribes to the end wake-ups and then reads the status once, to catch an end
//! committed before it subscribed. Right after a start (a client that starts an
//! orchestration and waits for it) that read almost always answers "running": one
//! statement per orchestration for nothing. Here a start of an instance that has not run
//! is watched before its statement runs; every end this process hears removes its
//! instance's watch before it is broadcast (`LocalWakes::end_heard`), and a wake-up that
//! may have been lost removes them all. A wait that subscribed and then finds its
//! instance still watched has seen no end of it yet and will hear one, so it skips that
//! first read. What it can still miss is an end whose wake-up was lost without the
//! listener noticing (a failed `NOTIFY`, a notification sent while the listen connection
//! was being re-established): as for an end after the first read, the wait then reads at
//! its recheck (`wait.rs`), within a second with a listener.
//!
//! An instance that had run before the start (a repeated start of an ended instance) is
//! not watched: its end may be long past, and the wait reads at once. A watch nobody
//! waits for is dropped once [`CAPACITY`] newer ones were made.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::wake::END_PAYLOAD_CHARS;

/// How many watches are kept at most (each holds its id twice, once cut to
/// `END_PAYLOAD_CHARS` characters: under 1 MB for ids of 20 characters).
const CAPACITY: usize = 16_384;

#[derive(Default)]
pub(crate) struct WatchedStarts {
    inner: Mutex<Watches>,
}

#[derive(Default)]
struct Watches {
    /// By end key (the instance id cut as the end wake-ups carry it): the full instance
    /// id, and when it was watched.
    by_key: HashMap<String, (String, u64)>,
    made: u64,
}

/// The key an end wake-up carries for `instance`.
pub(crate) fn end_key(instance: &str) -> String {
    instance.chars().take(END_PAYLOAD_CHARS).collect()
}

/// The watch of a start being written ([`WatchedStarts::watch_start`]): dropped without
/// [`keep_if`](Self::keep_if)`(true)` (the statement failed or was cancelled, the start
/// was refused, its instance had run before) it stops watching what it began to watch.
pub(crate) struct StartWatch<'a> {
    starts: &'a WatchedStarts,
    instance: &'a str,
    /// Whether this watch began the instance's watch (false if it was watched already).
    began: bool,
}

impl StartWatch<'_> {
    /// Keep the watch if the start was written and its instance is new.
    pub(crate) fn keep_if(mut self, new_instance: bool) {
        if new_instance {
            self.began = false;
        }
    }
}

impl Drop for StartWatch<'_> {
    fn drop(&mut self) {
        if self.began {
            self.starts.unwatch(self.instance);
        }
    }
}

impl WatchedStarts {
    /// A start of `instance` is about to be written: watch for its end until the returned
    /// watch is dropped, or for good if it is kept ([`StartWatch::keep_if`]).
    pub(crate) fn watch_start<'a>(&'a self, instance: &'a str) -> StartWatch<'a> {
        StartWatch {
            starts: self,
            instance,
            began: self.watch(instance),
        }
    }

    /// Watch for `instance`'s end. False if it is watched already, or another id with the
    /// same end key is (that one is then no longer watched either: an end of either would
    /// end both watches).
    fn watch(&self, instance: &str) -> bool {
        let mut w = self.lock();
        w.made += 1;
        let made = w.made;
        if w.by_key.len() >= CAPACITY {
            w.by_key
                .retain(|_, (_, at)| *at + (CAPACITY as u64) / 2 > made);
        }
        let key = end_key(instance);
        match w.by_key.get(&key) {
            None => {
                w.by_key.insert(key, (instance.to_owned(), made));
                true
            }
            Some((watched, _)) if watched == instance => false,
            Some(_) => {
                w.by_key.remove(&key);
                false
            }
        }
    }

    /// Stop watching `instance` (a [`StartWatch`] not kept).
    fn unwatch(&self, instance: &str) {
        let mut w = self.lock();
        let key = end_key(instance);
        if w.by_key
            .get(&key)
            .is_some_and(|(watched, _)| watched == instance)
        {
            w.by_key.remove(&key);
        }
    }

    /// An end of the instance with end key `key` was heard, or ("") ends may have been
    /// missed.
    pub(crate) fn end_heard(&self, key: &str) {
        let mut w = self.lock();
        if key.is_empty() {
            w.by_key.clear();
        } else {
            w.by_key.remove(key);
        }
    }

    /// Whether `instance`'s start was watched and no end of it heard since; the watch
    /// ends here (a second wait reads first).
    pub(crate) fn take_unended(&self, instance: &str) -> bool {
        let mut w = self.lock();
        let key = end_key(instance);
        match w.by_key.get(&key) {
            Some((watched, _)) if watched == instance => {
                w.by_key.remove(&key);
                true
            }
            _ => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Watches> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_lasts_until_an_end_is_heard_or_a_wait_takes_it() {
        let w = WatchedStarts::default();
        assert!(w.watch("a"));
        assert!(!w.watch("a"), "watched already");
        assert!(w.watch("b"));
        w.end_heard("a");
        assert!(!w.take_unended("a"), "its end was heard");
        assert!(w.take_unended("b"));
        assert!(!w.take_unended("b"), "taken by the first wait");
        assert!(!w.take_unended("never"));
    }

    #[test]
    fn a_possibly_lost_end_ends_every_watch() {
        let w = WatchedStarts::default();
        w.watch("a");
        w.watch("b");
        w.end_heard("");
        assert!(!w.take_unended("a"));
        assert!(!w.take_unended("b"));
    }

    #[test]
    fn an_unwritten_start_is_no_longer_watched() {
        let w = WatchedStarts::default();
        assert!(w.watch("a"));
        w.unwatch("a");
        assert!(!w.take_unended("a"));
        w.unwatch("never");
    }

    #[test]
    fn a_start_watch_is_kept_only_for_a_new_instance_written() {
        let w = WatchedStarts::default();
        w.watch_start("new").keep_if(true);
        w.watch_start("ran-before").keep_if(false);
        drop(w.watch_start("cancelled"));
        assert!(w.take_unended("new"));
        assert!(!w.take_unended("ran-before"));
        assert!(!w.take_unended("cancelled"));
        assert!(w.watch("earlier"));
        w.watch_start("earlier").keep_if(false);
        assert!(
            w.take_unended("earlier"),
            "a watch that began earlier is not ended by a later one not kept"
        );
    }

    #[test]
    fn ids_that_share_an_end_key_are_not_watched() {
        let w = WatchedStarts::default();
        let long = "x".repeat(END_PAYLOAD_CHARS);
        let (one, two) = (format!("{long}1"), format!("{long}2"));
        assert!(w.watch(&one));
        assert!(!w.watch(&two), "same end key");
        assert!(!w.take_unended(&one));
        assert!(!w.take_unended(&two));
    }

    #[test]
    fn old_watches_make_room_for_new_ones() {
        let w = WatchedStarts::default();
        for i in 0..CAPACITY * 3 {
            w.watch(&i.to_string());
        }
        assert!(w.lock().by_key.len() <= CAPACITY);
        assert!(w.take_unended(&(CAPACITY * 3 - 1).to_string()));
        assert!(!w.take_unended("0"));
    }
}
