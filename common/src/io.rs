//! I/O errors in the words every arrowfeat message uses.

use std::io::{Error, ErrorKind};
use std::path::Path;

/// An I/O error as a message says it: the common cases in fixed words (`no such file or
/// directory`, `permission denied`, `not a directory`, the same on every platform and
/// in lower case, to follow a path and a colon), otherwise the operating system's message
/// without Rust's ` (os error N)`.
pub fn io_message(error: &Error) -> String {
    match error.kind() {
        ErrorKind::NotFound => "no such file or directory".into(),
        ErrorKind::PermissionDenied => "permission denied".into(),
        ErrorKind::NotADirectory => "not a directory".into(),
        _ => {
            let text = error.to_string();
            match text.split_once(" (os error") {
                Some((message, _)) => message.to_string(),
                None => text,
            }
        }
    }
}

/// `path: ` and the [`io_message`] of `error`, the path escaped (see
/// [`clean`](crate::clean)): a path may come from a file or a pull request.
pub fn path_io_message(path: &Path, error: &Error) -> String {
    format!(
        "{}: {}",
        crate::clean(&path.display().to_string()),
        io_message(error)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_plain_and_name_the_path() {
        let missing = Error::from(ErrorKind::NotFound);
        assert_eq!(io_message(&missing), "no such file or directory");
        assert_eq!(
            path_io_message(Path::new("a\u{1b}.yaml"), &missing),
            "a\\u{1b}.yaml: no such file or directory"
        );
        let os = Error::from_raw_os_error(28); // ENOSPC on Linux
        let message = io_message(&os);
        assert!(!message.contains("os error"), "{message}");
        assert_eq!(io_message(&Error::other("disk on fire")), "disk on fire");
    }
}
