//! Tests of `planner cost`: being built for its issue; replace this file.
