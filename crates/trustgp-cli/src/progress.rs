//! Progress of long work on stderr: a spinner on a terminal; when stderr is piped or
//! redirected, a plain line every few seconds (`TRUSTGP_PROGRESS_SECONDS`, default 5), so a
//! long fit is never silent. Stdout is never touched.

use std::io::IsTerminal;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Seconds between plain progress lines when the environment does not say.
const DEFAULT_INTERVAL_SECONDS: f64 = 5.0;

/// A running progress display; [`Progress::finish`] ends it.
pub enum Progress {
    /// A spinner on a terminal.
    Spinner(ProgressBar),
    /// Plain lines from a timer thread, which stops when the sender is dropped.
    Lines {
        /// The latest message.
        message: Arc<Mutex<String>>,
        /// Dropped to stop the thread.
        stop: Sender<()>,
        /// The thread.
        thread: JoinHandle<()>,
    },
}

/// The interval of plain progress lines.
fn interval() -> Duration {
    let seconds = std::env::var("TRUSTGP_PROGRESS_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(DEFAULT_INTERVAL_SECONDS);
    Duration::from_secs_f64(seconds)
}

impl Progress {
    /// Start showing `message`.
    pub fn start(message: &str) -> Progress {
        if std::io::stderr().is_terminal() {
            let pb = ProgressBar::new_spinner();
            pb.set_style(
                ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            pb.set_message(message.to_string());
            pb.enable_steady_tick(Duration::from_millis(100));
            return Progress::Spinner(pb);
        }
        let shared = Arc::new(Mutex::new(message.to_string()));
        let (stop, stopped) = channel::<()>();
        let every = interval();
        let text = Arc::clone(&shared);
        let thread = std::thread::spawn(move || {
            let start = Instant::now();
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                let m = text.lock().map(|m| m.clone()).unwrap_or_default();
                eprintln!("{m} ({:.0} s)", start.elapsed().as_secs_f64());
            }
        });
        Progress::Lines {
            message: shared,
            stop,
            thread,
        }
    }

    /// Replace the message.
    pub fn set_message(&self, text: String) {
        match self {
            Progress::Spinner(pb) => pb.set_message(text),
            Progress::Lines { message, .. } => {
                if let Ok(mut m) = message.lock() {
                    *m = text;
                }
            }
        }
    }

    /// Stop the display.
    pub fn finish(self) {
        match self {
            Progress::Spinner(pb) => pb.finish_and_clear(),
            Progress::Lines { stop, thread, .. } => {
                drop(stop);
                // The thread only prints; if it panicked there is nothing left to clean up.
                let _ = thread.join();
            }
        }
    }
}
