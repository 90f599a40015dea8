//! Being built for its issue; replace this file.
