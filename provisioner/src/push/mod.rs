//! `provisioner push`: pushes the planner's rendered switch configurations
//! to the switches safely (issue #16).
//!
//! Per switch: check the device's identity against the plan, load the
//! rendered candidate (replace semantics), show the diff, stop there on a
//! dry run; else commit with a confirm timer, verify the switch against the
//! plan, and confirm (and save) or roll back.
//!
//! Module map:
//! - [`device`]: the [`Device`] trait every vendor client implements, the
//!   types it exchanges ([`Identity`], [`Commit`], [`Observed`]) and what a
//!   client is given to connect ([`Target`], [`Secret`]).
//! - `error`: [`PushError`].
//! - [`sonic`] (SONiC) and [`comware`] (H3C Comware 7) over [`ssh`] (russh);
//!   Comware's `display` readers are `comware_answers` (re-exported by
//!   [`comware`]), NVUE's operational-tree readers `nvue_answers`.
//! - [`Client`] (here): the vendor clients as one enum (static dispatch):
//!   [`nvue`] (NVUE REST, loading the planner's NVUE tree; [`nvue_tree`]
//!   diffs trees) and [`eos`] (eAPI), over `http` (reqwest, rustls);
//!   [`frr`] (FRRouting via vtysh and frr-reload.py: the lab's switches,
//!   transport netns).
//! - [`devices`]: the devices file, checked against the plan.
//! - [`run`]: the push (candidates from `planner::render`, batches,
//!   per-switch steps); [`rollout`] the batches (pure); [`verify`] the
//!   switch against the plan; [`journal`] the atomic state file; [`ops`]
//!   status, confirm, rollback and the watchdog.
//!
//! Credentials live only in [`Secret`], which never prints and never
//! serialises.

pub mod comware;
mod comware_answers;
pub mod connect;
pub mod device;
pub mod devices;
pub mod eos;
pub mod error;
pub mod frr;
mod http;
pub mod journal;
pub mod keep;
pub mod nvue;
mod nvue_answers;
pub mod nvue_tree;
pub mod ops;
pub mod rollout;
pub mod run;
pub mod sonic;
pub mod ssh;
pub mod verify;

pub use device::{
    BfdPeer, BgpSession, Candidate, Commit, Connect, Device, HostKeyCheck, Identity, Interface,
    LldpNeighbour, Observed, Opening, Route, Secret, Target, Tls, Transport,
};
pub use error::{BoxError, PushError, Result};

/// Declares [`Client`] from its rows (`Variant(module::Type),`, the
/// variant named as the render vendor it pushes), implements [`Device`]
/// for it by delegation to the variant, and dispatches the [`Connect`]
/// part (transports, candidate, connect) on the render vendor.
///
/// A vendor client is its module, implementing [`Device`] and [`Connect`],
/// and one row in the invocation below (keep the comment line above each
/// row: rows of different branches then merge without conflicts). The
/// dispatch matches every render vendor without a catch-all, so a vendor
/// added to the planner's `vendors!` does not compile here until its row
/// is added.
macro_rules! clients {
    ($($(#[$doc:meta])* $variant:ident($ty:ty),)+) => {
        /// A connected vendor client (one variant per vendor client).
        #[derive(Debug)]
        pub enum Client {
            $($(#[$doc])* $variant($ty),)+
        }

        impl Client {
            /// The transports vendor `v` is reached over, the first the
            /// default.
            pub fn transports(v: planner::render::Vendor) -> &'static [Transport] {
                match v { $(planner::render::Vendor::$variant => <$ty as Connect>::TRANSPORTS,)+ }
            }

            /// What vendor `v`'s client loads as a candidate.
            pub fn candidate(v: planner::render::Vendor) -> Candidate {
                match v { $(planner::render::Vendor::$variant => <$ty as Connect>::CANDIDATE,)+ }
            }

            /// The client of vendor `v` for the switch at `target`.
            pub fn connect(
                v: planner::render::Vendor,
                target: &Target,
                opening: &Opening<'_>,
            ) -> Result<Client> {
                match v {
                    $(planner::render::Vendor::$variant => {
                        Ok(Client::$variant(<$ty as Connect>::connect(target, opening)?))
                    })+
                }
            }
        }

        impl Device for Client {
            async fn identity(&mut self) -> Result<Identity> {
                match self { $(Client::$variant(d) => d.identity().await,)+ }
            }
            async fn load(&mut self, candidate: &str) -> Result<String> {
                match self { $(Client::$variant(d) => d.load(candidate).await,)+ }
            }
            async fn discard(&mut self) -> Result<()> {
                match self { $(Client::$variant(d) => d.discard().await,)+ }
            }
            async fn prepare(&mut self) -> Result<String> {
                match self { $(Client::$variant(d) => d.prepare().await,)+ }
            }
            fn native_timer(&self) -> bool {
                match self { $(Client::$variant(d) => d.native_timer(),)+ }
            }
            async fn commit(&mut self, timer: std::time::Duration) -> Result<Commit> {
                match self { $(Client::$variant(d) => d.commit(timer).await,)+ }
            }
            async fn observe(&mut self) -> Result<Observed> {
                match self { $(Client::$variant(d) => d.observe().await,)+ }
            }
            async fn confirm(&mut self) -> Result<()> {
                match self { $(Client::$variant(d) => d.confirm().await,)+ }
            }
            async fn rollback(&mut self, point: &str) -> Result<()> {
                match self { $(Client::$variant(d) => d.rollback(point).await,)+ }
            }
        }
    };
}

// One row per vendor client: `/// doc` then `Variant(module::Type),`.
clients! {
    /// NVIDIA Cumulus Linux (NVUE REST).
    Nvue(nvue::Nvue),
    /// Arista EOS (eAPI).
    Eos(eos::Eos),
    /// SONiC over SSH (checkpoint, replace, rollback); boxed, as an SSH
    /// session is large beside the other clients.
    Sonic(Box<sonic::Sonic>),
    /// H3C Comware 7 over its SSH CLI (commit delay, configuration
    /// replace); boxed, as an SSH session is large beside the other clients.
    Comware(Box<comware::Comware>),
    /// FRRouting on a Linux switch (the lab's switches), via vtysh.
    Frr(frr::Frr),
}
