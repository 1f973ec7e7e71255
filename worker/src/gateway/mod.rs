//! The Worker, in files by job. [`routes`] is the entry point and the route table; each route group has its
//! file ([`fetch`]: the `/v1/fetch` proxy, [`permission`]: acquire, depart and observe for crawlers that fetch on
//! their own, [`reports`]: host reports and the health check, [`admin`]: the operators' rules). What they share:
//! the request as handlers see it ([`request`]), the bindings read once per isolate ([`bindings`]), a turn at a
//! host ([`turn`]) with its robots.txt fetch ([`robots`]), the relayed answer ([`relay`]), the calls to the
//! Durable Objects ([`host_client`], [`admission`]), the gateway's own answers ([`responses`]) and log lines
//! ([`logs`]).
//!
//! Every wait the Worker sleeps is one the host's Durable Object computed with the core; it re-derives none.

pub(crate) mod admin;
pub(crate) mod admission;
pub(crate) mod bindings;
pub(crate) mod fetch;
pub(crate) mod host_client;
pub(crate) mod logs;
pub(crate) mod permission;
pub(crate) mod relay;
pub(crate) mod reports;
pub(crate) mod request;
pub(crate) mod responses;
pub(crate) mod robots;
pub(crate) mod routes;
pub(crate) mod turn;
