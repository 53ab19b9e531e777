//! Applications registered on the AT-SPI registry, with their pids.

use super::{within, A11y, REGISTRY, ROOT_PATH, I_ACCESSIBLE};
use crate::error::{Code, Error, Result};
use futures_util::future::join_all;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct AppEntry {
    /// Unique bus name of the application on the accessibility bus.
    pub bus: String,
    pub pid: Option<u32>,
    /// The application's accessible name ("" when unknown).
    pub name: String,
}

/// Every application on the registry. `with_names` also asks each app for its
/// accessible name (each under a short timeout: a hung app answers "").
pub async fn list(a: &A11y, with_names: bool) -> Result<Vec<AppEntry>> {
    let kids = a.children(REGISTRY, ROOT_PATH).await?;
    let futs = kids.iter().map(|(bus, path)| async move {
        let pid = a.pid_of(bus).await.ok();
        let name = if with_names {
            within(Duration::from_millis(800), "application name", a.prop_string(bus, path.as_str(), I_ACCESSIBLE, "Name"))
                .await
                .unwrap_or_default()
        } else {
            String::new()
        };
        AppEntry { bus: bus.clone(), pid, name }
    });
    Ok(join_all(futs).await)
}

/// The accessibility bus name of the application with this pid.
pub async fn find_by_pid(a: &A11y, pid: u32) -> Result<String> {
    let apps = list(a, false).await?;
    apps.into_iter()
        .find(|e| e.pid == Some(pid))
        .map(|e| e.bus)
        .ok_or_else(|| {
            Error::new(Code::AppNotFound, format!("no application with pid {pid} is registered on the accessibility bus"))
                .with("pid", pid)
        })
}
