//! Length-prefixed frames (filled in by the wire work).
