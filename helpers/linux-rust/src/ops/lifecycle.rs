//! App lifecycle (issue 13): installed apps, launch, window activate/restore/close.
