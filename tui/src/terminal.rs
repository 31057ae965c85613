//! The event loop on a real terminal: draw, wait for an event, update, and draw again
//! only when something changed (no timer, so nothing flickers or spins).

use std::io::{self, IsTerminal};

use metalsim_traces::Trace;
use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{self, DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;

use crate::app::{App, update};
use crate::{keymap, ui};

/// Opens the terminal UI on `trace` and returns when the user quits. Fails when standard
/// input or output is not a terminal, or the terminal cannot be set up.
pub fn run(trace: Trace) -> io::Result<()> {
    if !io::stdout().is_terminal() || !io::stdin().is_terminal() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "metalsim tui needs a terminal (standard input and output are not one)",
        ));
    }
    let mut terminal = ratatui::try_init()?;
    // Mouse capture is optional: the wheel scrolls when the terminal offers it.
    let _ = execute!(io::stdout(), EnableMouseCapture);
    let result = event_loop(&mut terminal, trace);
    let _ = execute!(io::stdout(), DisableMouseCapture);
    ratatui::try_restore()?;
    result
}

fn event_loop(terminal: &mut DefaultTerminal, trace: Trace) -> io::Result<()> {
    let size = terminal.size()?;
    let mut app = App::new(trace, (size.width, size.height));
    terminal.draw(|f| ui::draw(f, &app))?;
    while !app.quit {
        let event = event::read()?;
        let Some(msg) = keymap::message(&event, app.search.typing) else {
            continue;
        };
        update(&mut app, msg);
        if !app.quit {
            terminal.draw(|f| ui::draw(f, &app))?;
        }
    }
    Ok(())
}
