//! Menus by path (issue 13).
