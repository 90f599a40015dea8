//! Tests of `planner export`: being built for its issue; replace this file.
