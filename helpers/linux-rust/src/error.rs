//! One error type for the whole helper. Every failure that reaches the wire
//! carries one of the protocol's HELPER_ERROR_CODES.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    InvalidArguments,
    AppNotFound,
    WindowNotFound,
    ElementUnresolvable,
    ActionUnsupported,
    ActionFailed,
    PermissionDenied,
    ScreenshotFailed,
    Timeout,
    Internal,
    /// (1.1) The keyboard focus is not on the window the input was meant for.
    FocusMismatch,
    /// (1.1) A guard the orchestrator set refused an event (input.pointer_guard:
    /// the point is not over the target's windows).
    PolicyDenied,
    /// (1.2) A mutation was sent but its read-back disagrees.
    VerificationFailed,
    /// (1.2) The target process exited (or left the bus) mid-request.
    AppExited,
    /// (2.1) launch could not start the process (exec failed; details.reason).
    LaunchFailed,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidArguments => "INVALID_ARGUMENTS",
            Code::AppNotFound => "APP_NOT_FOUND",
            Code::WindowNotFound => "WINDOW_NOT_FOUND",
            Code::ElementUnresolvable => "ELEMENT_UNRESOLVABLE",
            Code::ActionUnsupported => "ACTION_UNSUPPORTED",
            Code::ActionFailed => "ACTION_FAILED",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::ScreenshotFailed => "SCREENSHOT_FAILED",
            Code::Timeout => "TIMEOUT",
            Code::Internal => "INTERNAL",
            Code::FocusMismatch => "FOCUS_MISMATCH",
            Code::PolicyDenied => "POLICY_DENIED",
            Code::VerificationFailed => "VERIFICATION_FAILED",
            Code::AppExited => "APP_EXITED",
            Code::LaunchFailed => "LAUNCH_FAILED",
        }
    }
}

/// A detail value: the wire allows string | number | boolean.
#[derive(Debug, Clone, PartialEq)]
pub enum Detail {
    Str(String),
    Int(i64),
    Bool(bool),
}

impl From<&str> for Detail {
    fn from(s: &str) -> Self {
        Detail::Str(s.to_string())
    }
}
impl From<String> for Detail {
    fn from(s: String) -> Self {
        Detail::Str(s)
    }
}
impl From<i64> for Detail {
    fn from(v: i64) -> Self {
        Detail::Int(v)
    }
}
impl From<u32> for Detail {
    fn from(v: u32) -> Self {
        Detail::Int(v as i64)
    }
}
impl From<bool> for Detail {
    fn from(v: bool) -> Self {
        Detail::Bool(v)
    }
}

#[derive(Debug, Clone)]
pub struct Error {
    pub code: Code,
    pub message: String,
    pub details: Vec<(String, Detail)>,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Error { code, message: message.into(), details: Vec::new() }
    }
    pub fn with(mut self, key: &str, value: impl Into<Detail>) -> Self {
        self.details.push((key.to_string(), value.into()));
        self
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidArguments, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(Code::Internal, message)
    }
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(Code::Timeout, message)
    }
    /// Re-code an error (e.g. a D-Bus failure while acting becomes ACTION_FAILED),
    /// but keep TIMEOUT and APP_EXITED as they are (they say more).
    pub fn recode(mut self, code: Code) -> Self {
        if !matches!(self.code, Code::Timeout | Code::AppExited) {
            self.code = code;
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for Error {}

impl From<zbus::Error> for Error {
    fn from(e: zbus::Error) -> Self {
        match &e {
            zbus::Error::InputOutput(_) => Error::internal(format!("accessibility bus I/O: {e}")),
            zbus::Error::MethodError(name, msg, _) => {
                let n = name.as_str();
                let m = msg.clone().unwrap_or_default();
                if peer_gone(n, &m) {
                    // The application's connection is gone: it exited (or
                    // closed its accessibility connection) mid-request.
                    Error::new(Code::AppExited, format!("D-Bus {n}: {m}")).with("dbus_error", n)
                } else if n.ends_with("UnknownObject") || n.ends_with("UnknownMethod") {
                    Error::new(Code::ElementUnresolvable, format!("D-Bus {n}: {m}")).with("dbus_error", n)
                } else if n.ends_with("NoReply") || n.ends_with("Timeout") {
                    Error::timeout(format!("D-Bus {n}: {m}")).with("dbus_error", n)
                } else {
                    Error::internal(format!("D-Bus {n}: {m}")).with("dbus_error", n)
                }
            }
            _ => Error::internal(format!("D-Bus: {e}")),
        }
    }
}

/// Whether a D-Bus error reply says the peer called is no longer on the bus:
/// the name has no owner (ServiceUnknown, NameHasNoOwner), or it left
/// without answering (NoReply "... disconnected ...", not NoReply's
/// timeout).
pub fn peer_gone(name: &str, message: &str) -> bool {
    let n = name.rsplit('.').next().unwrap_or(name);
    match n {
        "ServiceUnknown" | "NameHasNoOwner" => true,
        "NoReply" => message.contains("disconnected"),
        _ => false,
    }
}

impl From<zbus::fdo::Error> for Error {
    fn from(e: zbus::fdo::Error) -> Self {
        Error::from(zbus::Error::from(e))
    }
}

impl From<zbus::zvariant::Error> for Error {
    fn from(e: zbus::zvariant::Error) -> Self {
        Error::internal(format!("D-Bus reply decoding: {e}"))
    }
}

impl From<x11rb::errors::ConnectionError> for Error {
    fn from(e: x11rb::errors::ConnectionError) -> Self {
        Error::internal(format!("X connection: {e}"))
    }
}

impl From<x11rb::errors::ConnectError> for Error {
    fn from(e: x11rb::errors::ConnectError) -> Self {
        Error::new(Code::PermissionDenied, format!("cannot open the X display: {e}"))
    }
}

impl From<x11rb::errors::ReplyError> for Error {
    fn from(e: x11rb::errors::ReplyError) -> Self {
        match &e {
            x11rb::errors::ReplyError::X11Error(x) if x.error_kind == x11rb::protocol::ErrorKind::Window => {
                Error::new(Code::WindowNotFound, format!("X window gone: {e}"))
            }
            _ => Error::internal(format!("X request: {e}")),
        }
    }
}

impl From<x11rb::errors::ReplyOrIdError> for Error {
    fn from(e: x11rb::errors::ReplyOrIdError) -> Self {
        match e {
            x11rb::errors::ReplyOrIdError::X11Error(x) => Error::from(x11rb::errors::ReplyError::X11Error(x)),
            other => Error::internal(format!("X request: {other}")),
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::internal(format!("I/O: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_that_left_the_bus_is_app_exited() {
        let e = |n: &str, m: &str| {
            let name = zbus::names::OwnedErrorName::try_from(n.to_string()).unwrap();
            let msg = zbus::message::Message::method_call("/", "Ping").unwrap().build(&()).unwrap();
            Error::from(zbus::Error::MethodError(name, Some(m.to_string()), msg)).code
        };
        assert_eq!(e("org.freedesktop.DBus.Error.ServiceUnknown", "The name :1.42 was not provided by any .service files"), Code::AppExited);
        assert_eq!(e("org.freedesktop.DBus.Error.NameHasNoOwner", "Could not get PID of name ':1.42'"), Code::AppExited);
        assert_eq!(e("org.freedesktop.DBus.Error.NoReply", "Message recipient disconnected from message bus without replying"), Code::AppExited);
        assert_eq!(e("org.freedesktop.DBus.Error.NoReply", "Did not receive a reply"), Code::Timeout);
        assert_eq!(e("org.freedesktop.DBus.Error.UnknownObject", "no such object"), Code::ElementUnresolvable);
        assert_eq!(Error::new(Code::AppExited, "gone").recode(Code::ActionFailed).code, Code::AppExited);
    }
}
