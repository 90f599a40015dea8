//! Provisioner.
