//! The terminal browser for replay results (`macroscope tui`).
//!
//! Opening a results file starts a background pass (`index`) that records where each
//! chunk's rows start, per-frame totals and histograms; the screen is painted as soon
//! as the first chunk is in and fills in as the pass goes. Draw rows are read on demand
//! (`store`), only those on screen, from a small cache of decompressed chunks, so a
//! file of millions of draws opens at once and scrolls without copying. A draw's
//! method stream is traced on request (`inspect`) by a [`DrawTracer`] the caller hands
//! in: the CLI's replays the trace up to that draw through the driver model.

#![deny(missing_docs)]

pub mod app;
pub mod filter;
pub mod format;
pub mod index;
pub mod inspect;
pub mod store;
pub mod view;

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::ExecutableCommand;
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

pub use app::App;
pub use inspect::{DrawTracer, MethodRun, TracedDraw};

/// Why the browser could not run.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// A results file could not be opened.
    #[error(transparent)]
    Format(#[from] trace_format::Error),
    /// The terminal failed.
    #[error("terminal: {0}")]
    Terminal(io::Error),
}

// Not `#[from]`: the message says the cause already, so it is not also a `source`.
impl From<io::Error> for TuiError {
    fn from(e: io::Error) -> Self {
        TuiError::Terminal(e)
    }
}

impl TuiError {
    /// Whether the input (not the system) is at fault.
    pub fn is_bad_input(&self) -> bool {
        match self {
            TuiError::Format(e) => e.is_bad_input(),
            TuiError::Terminal(_) => false,
        }
    }
}

/// Browses `results`, compared with `baseline` when given, until the user quits;
/// `tracer` traces draws' method streams when asked.
pub fn run(
    results: &Path,
    baseline: Option<&Path>,
    tracer: Option<Arc<dyn DrawTracer>>,
) -> Result<(), TuiError> {
    let mut app = App::open(results, baseline)?;
    if let Some(tracer) = tracer {
        app.inspector.set_tracer(tracer);
    }
    let _guard = TerminalGuard::enter()?;
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    terminal.clear()?;
    let mut dirty = true;
    while !app.quit {
        if dirty {
            terminal.draw(|frame| app.draw(frame))?;
            dirty = false;
        }
        // Poll quickly while work runs in the background, slowly when idle.
        let wait = if app.busy() { 50 } else { 500 };
        if event::poll(Duration::from_millis(wait))? {
            match event::read()? {
                Event::Key(key) => app.key(key),
                Event::Mouse(mouse) => app.mouse(mouse),
                _ => {}
            }
            dirty = true;
        }
        dirty |= app.tick();
    }
    Ok(())
}

/// Raw mode, the alternate screen and mouse capture, undone when dropped and when a
/// panic unwinds, so the terminal is left as it was found.
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> io::Result<Self> {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        enable_raw_mode()?;
        let guard = TerminalGuard;
        io::stdout()
            .execute(EnterAlternateScreen)?
            .execute(EnableMouseCapture)?;
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

fn restore() {
    let mut out = io::stdout();
    let _ = out.execute(DisableMouseCapture);
    let _ = out.execute(LeaveAlternateScreen);
    let _ = disable_raw_mode();
}
