//! Placeholder until the redis backend lands (not compiled without its feature).
