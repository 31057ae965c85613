//! The one keymap: terminal events to [`Msg`]s.

use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};

use crate::app::{Msg, View};

/// The message a terminal event means, given whether a search is being typed.
pub fn message(event: &Event, typing: bool) -> Option<Msg> {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => {
            if typing {
                search_key(key)
            } else {
                key_message(key)
            }
        }
        Event::Mouse(mouse) => mouse_message(mouse),
        Event::Resize(w, h) => Some(Msg::Resize(*w, *h)),
        _ => None,
    }
}

fn search_key(key: &KeyEvent) -> Option<Msg> {
    match key.code {
        KeyCode::Enter => Some(Msg::SearchSubmit),
        KeyCode::Esc => Some(Msg::Dismiss),
        KeyCode::Backspace => Some(Msg::SearchBackspace),
        KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => Some(Msg::Dismiss),
        KeyCode::Char(c) => Some(Msg::SearchInput(c)),
        _ => None,
    }
}

fn key_message(key: &KeyEvent) -> Option<Msg> {
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return match key.code {
            KeyCode::Char('c') => Some(Msg::Quit),
            KeyCode::Char('d') => Some(Msg::PageDown),
            KeyCode::Char('u') => Some(Msg::PageUp),
            _ => None,
        };
    }
    Some(match key.code {
        KeyCode::Char('q') => Msg::Quit,
        KeyCode::Tab => Msg::NextView,
        KeyCode::BackTab => Msg::PrevView,
        KeyCode::Char(c @ '1'..='5') => Msg::Show(View::ALL[c as usize - '1' as usize]),
        KeyCode::Up | KeyCode::Char('k') => Msg::Up,
        KeyCode::Down | KeyCode::Char('j') => Msg::Down,
        KeyCode::Left | KeyCode::Char('h') => Msg::Left,
        KeyCode::Right | KeyCode::Char('l') => Msg::Right,
        KeyCode::PageUp => Msg::PageUp,
        KeyCode::PageDown | KeyCode::Char(' ') => Msg::PageDown,
        KeyCode::Home | KeyCode::Char('g') => Msg::Top,
        KeyCode::End | KeyCode::Char('G') => Msg::Bottom,
        KeyCode::Char('+') | KeyCode::Char('=') | KeyCode::Char('z') => Msg::ZoomIn,
        KeyCode::Char('-') | KeyCode::Char('Z') => Msg::ZoomOut,
        KeyCode::Char('0') => Msg::ZoomReset,
        KeyCode::Enter => Msg::Select,
        KeyCode::Char('s') => Msg::ToggleSort,
        KeyCode::Char('f') => Msg::NextFile,
        KeyCode::Char('m') => Msg::ToggleHeat,
        KeyCode::Char('e') => Msg::NextEvent,
        KeyCode::Char('E') => Msg::PrevEvent,
        KeyCode::Char('?') => Msg::Help,
        KeyCode::Char('/') => Msg::SearchStart,
        KeyCode::Char('n') => Msg::SearchNext,
        KeyCode::Char('N') => Msg::SearchPrev,
        KeyCode::Esc => Msg::Dismiss,
        _ => return None,
    })
}

fn mouse_message(mouse: &MouseEvent) -> Option<Msg> {
    match mouse.kind {
        MouseEventKind::ScrollUp => Some(Msg::Up),
        MouseEventKind::ScrollDown => Some(Msg::Down),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(code: KeyCode, modifiers: KeyModifiers, typing: bool, expected: Option<Msg>) {
        let event = Event::Key(KeyEvent::new(code, modifiers));
        assert_eq!(message(&event, typing), expected);
    }

    #[test]
    fn vim_keys_and_arrows_agree() {
        check(
            KeyCode::Char('j'),
            KeyModifiers::NONE,
            false,
            Some(Msg::Down),
        );
        check(KeyCode::Down, KeyModifiers::NONE, false, Some(Msg::Down));
        check(
            KeyCode::Char('h'),
            KeyModifiers::NONE,
            false,
            Some(Msg::Left),
        );
        check(KeyCode::Tab, KeyModifiers::NONE, false, Some(Msg::NextView));
        check(
            KeyCode::Char('5'),
            KeyModifiers::NONE,
            false,
            Some(Msg::Show(View::Teaching)),
        );
    }

    #[test]
    fn typing_a_search_takes_every_character() {
        check(
            KeyCode::Char('q'),
            KeyModifiers::NONE,
            true,
            Some(Msg::SearchInput('q')),
        );
        check(
            KeyCode::Enter,
            KeyModifiers::NONE,
            true,
            Some(Msg::SearchSubmit),
        );
        check(
            KeyCode::Char('q'),
            KeyModifiers::NONE,
            false,
            Some(Msg::Quit),
        );
        check(
            KeyCode::Char('c'),
            KeyModifiers::CONTROL,
            false,
            Some(Msg::Quit),
        );
    }

    #[test]
    fn key_releases_and_unknown_keys_mean_nothing() {
        let release = Event::Key(KeyEvent::new_with_kind(
            KeyCode::Char('q'),
            KeyModifiers::NONE,
            KeyEventKind::Release,
        ));
        assert_eq!(message(&release, false), None);
        check(KeyCode::F(5), KeyModifiers::NONE, false, None);
    }
}
