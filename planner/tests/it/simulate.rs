//! Tests of `planner simulate`: being built for its issue; replace this file.
