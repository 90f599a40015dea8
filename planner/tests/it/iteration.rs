//! Tests of `planner iteration`: being built for its issue; replace this file.
