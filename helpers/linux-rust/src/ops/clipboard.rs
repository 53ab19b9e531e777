//! The clipboard (issue 13): X11 CLIPBOARD/PRIMARY get, set (a detached owner process), paste.
