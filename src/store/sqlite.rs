//! Placeholder until the sqlite backend lands (not compiled without its feature).
