//! Placeholder until the postgres backend lands (not compiled without its feature).
