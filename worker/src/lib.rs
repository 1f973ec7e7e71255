//! # hostpace-worker: the edge fetch gateway
//!
//! A Cloudflare Worker that gives a crawler fleet **one politeness budget per target host**: every host has one
//! Durable Object ([`HostDesk`] inside `HostObject`), the single source of time and truth for that host, shared by
//! every crawler and every Worker instance. The Worker authenticates, checks the target, asks the host's object
//! for a departure, waits its turn, fetches, reports the response back and streams the body.
//!
//! This crate is a thin shell: **every wait comes from the core** (`hostpace`): decisions and reservations
//! ([`hostpace::Registry::acquire`]), departure confirmation ([`hostpace::Registry::depart`]), cooldowns from
//! 429/503 and `Retry-After` / `RateLimit` headers ([`hostpace::Registry::observe`]), robots.txt `Crawl-delay`
//! ([`hostpace::Registry::observe_robots`]), the retry verdict ([`hostpace::RetryBudget::verdict`]) and
//! persistence ([`hostpace::Snapshot`]). What is here is HTTP plumbing and security.
//!
//! Modules that only make sense inside workerd (the Worker in `gateway/`, in files by job; the Durable Objects;
//! the JS stream helpers) build for `wasm32` only; the pure parts — configuration, target checks, header
//! filtering, authentication, route matching ([`router`]), the wire protocol and the per-host desk — build
//! everywhere and are unit-tested natively (`cargo test -p hostpace-worker`).

#![deny(missing_docs)]

pub mod api;
pub mod auth;
pub mod config;
pub mod desk;
pub mod headers;
pub mod journal;
pub mod protocol;
pub mod request_url;
pub mod router;
pub mod rulebook;
pub mod sites;
pub mod target;
pub mod tenants;

#[cfg(target_arch = "wasm32")]
mod departure;
#[cfg(target_arch = "wasm32")]
mod gateway;
#[cfg(target_arch = "wasm32")]
mod host_object;
#[cfg(target_arch = "wasm32")]
mod js;
#[cfg(target_arch = "wasm32")]
mod ledger;
#[cfg(target_arch = "wasm32")]
mod rules_object;

pub use api::ApiError;
pub use config::GatewayConfig;
pub use desk::{Asker, HostDesk};
pub use target::{check_target, Target};
