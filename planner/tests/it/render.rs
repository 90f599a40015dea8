//! Tests of `planner render`: being built for its issue; replace this file.
