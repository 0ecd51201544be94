//! Input files read safely: bounded, regular files only, with errors in plain words; and
//! positions in them (line and column from a byte offset and back).

use std::path::Path;

use arrowfeat_common::path_io_message;

/// What a file that is not a regular file is, for "expected a regular file" messages.
pub fn file_kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_block_device() || file_type.is_char_device() {
            return "a device";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Reads a whole regular file of at most `limit` bytes. Directories, FIFOs, sockets and
/// devices are refused before they are opened (reading a FIFO blocks until a writer
/// comes; a device may never end), with a message that says which; on Linux the file is
/// also opened non-blocking and checked again, so one swapped in meanwhile cannot hang
/// the run either. The read itself stops at `limit + 1` bytes.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let shown = || crate::text::clean(&path.display().to_string());
    let metadata = std::fs::metadata(path).map_err(|e| path_io_message(path, &e))?;
    let refuse = |metadata: &std::fs::Metadata| -> Result<(), String> {
        if !metadata.is_file() {
            return Err(format!(
                "{} is {}; expected a regular file",
                shown(),
                file_kind(&metadata.file_type())
            ));
        }
        if metadata.len() > limit {
            return Err(format!(
                "{} is {} bytes; the limit is {limit} bytes",
                shown(),
                metadata.len()
            ));
        }
        Ok(())
    };
    refuse(&metadata)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        const O_NONBLOCK: i32 = 0o4000; // Linux, every architecture Rust supports
        options.custom_flags(O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| path_io_message(path, &e))?;
    refuse(&file.metadata().map_err(|e| path_io_message(path, &e))?)?;
    let mut bytes = Vec::with_capacity(metadata.len().min(limit) as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| path_io_message(path, &e))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "{} is larger than the limit of {limit} bytes",
            shown()
        ));
    }
    Ok(bytes)
}

/// The byte offset of 1-based `line`, `column` (a column counted in bytes, as serde_json
/// counts) in `text`, clamped to its end.
pub(crate) fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (start + column).min(text.len())
}

/// The 1-based line and column (in characters) of byte `offset` of `bytes`.
pub(crate) fn line_column_at(bytes: &[u8], offset: usize) -> (u64, u64) {
    let before = &bytes[..offset];
    let line = before.iter().filter(|b| **b == b'\n').count() as u64 + 1;
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count() as u64
        + 1;
    (line, column)
}
