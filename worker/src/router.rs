//! Route matching, as data: a table of routes (a method and a path pattern each) and the one function that finds
//! a request's route in it. A path some route has, asked with another method, is 405 with the methods it does
//! have (for `Allow`); a path no route has is 404. Pure: the Worker's own table, with its handlers, is built for
//! `wasm32` only (the `routes` module).

use crate::api::{ApiError, Refusal};

/// One route: `method` on `path`, answered by `handler`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route<H> {
    /// The HTTP method, uppercase (`GET`, `POST`).
    pub method: &'static str,
    /// The path: matched exactly, or, when it ends in a `{name}` segment (`/v1/hosts/{host}`), any path that
    /// starts with what comes before it; that segment takes the rest of the path.
    pub path: &'static str,
    /// What the route's usage shows after the path, for a person (`?url=`; usually empty).
    pub usage: &'static str,
    /// What answers the route.
    pub handler: H,
}

impl<H> Route<H> {
    /// `GET` on `path`.
    pub const fn get(path: &'static str, handler: H) -> Route<H> {
        Route { method: "GET", path, usage: "", handler }
    }

    /// `POST` on `path`.
    pub const fn post(path: &'static str, handler: H) -> Route<H> {
        Route { method: "POST", path, usage: "", handler }
    }

    /// `PUT` on `path`.
    pub const fn put(path: &'static str, handler: H) -> Route<H> {
        Route { method: "PUT", path, usage: "", handler }
    }

    /// `DELETE` on `path`.
    pub const fn delete(path: &'static str, handler: H) -> Route<H> {
        Route { method: "DELETE", path, usage: "", handler }
    }

    /// The rest of `path` the route's `{name}` segment takes (empty for an exact path), or `None` when the route
    /// does not have `path`.
    pub fn param<'p>(&self, path: &'p str) -> Option<&'p str> {
        match self.path.find('{') {
            None => (self.path == path).then_some(""),
            Some(at) => path.strip_prefix(&self.path[..at]),
        }
    }
}

impl<H: Copy> Route<H> {
    /// The route, its usage showing `usage` after the path.
    pub const fn usage(self, usage: &'static str) -> Route<H> {
        Route { usage, ..self }
    }
}

/// What a request matched in a table.
#[derive(Debug, PartialEq, Eq)]
pub enum Matched<'t, 'p, H> {
    /// This route, with what its `{name}` segment took of the path (empty for an exact path).
    Found {
        /// The route.
        route: &'t Route<H>,
        /// The path's part taken by the route's `{name}` segment.
        param: &'p str,
    },
    /// Routes have the path, none with the request's method: the methods they have, as an `Allow` value.
    WrongMethod {
        /// The methods, comma-separated (`GET`, `GET, POST`).
        allow: String,
    },
    /// No route has the path.
    NotFound,
}

/// The route of `method` on `path` in `table` (the first that matches, in table order).
pub fn find<'t, 'p, H>(table: &'t [Route<H>], method: &str, path: &'p str) -> Matched<'t, 'p, H> {
    let mut allow: Vec<&str> = Vec::new();
    for route in table {
        if let Some(param) = route.param(path) {
            if route.method == method {
                return Matched::Found { route, param };
            }
            if !allow.contains(&route.method) {
                allow.push(route.method);
            }
        }
    }
    if allow.is_empty() {
        Matched::NotFound
    } else {
        Matched::WrongMethod { allow: allow.join(", ") }
    }
}

/// 404 `not_found` for `method` on `path`, listing the table's routes and the static playground.
pub fn not_found<H>(table: &[Route<H>], method: &str, path: &str) -> ApiError {
    let routes: Vec<String> = table.iter().map(|r| format!("{} {}{}", r.method, r.path, r.usage)).collect();
    ApiError::new(
        Refusal::NotFound,
        format!("no route {method} {path} (routes: {}, the playground at /)", routes.join(", ")),
    )
}

/// 405 `method_not_allowed` for `method` on `path`, whose routes allow `allow` (the answer's `Allow` header).
pub fn method_not_allowed(method: &str, path: &str, allow: &str) -> ApiError {
    ApiError::new(Refusal::MethodNotAllowed, format!("{method} is not allowed on {path} (allowed: {allow})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: [Route<u8>; 4] = [
        Route::get("/v1/fetch", 1).usage("?url="),
        Route::post("/v1/acquire", 2),
        Route::get("/v1/hosts/{host}", 3),
        Route::post("/v1/hosts/{host}", 4),
    ];

    fn found(method: &str, path: &str) -> Option<(u8, String)> {
        match find(&TABLE, method, path) {
            Matched::Found { route, param } => Some((route.handler, param.to_owned())),
            _ => None,
        }
    }

    #[test]
    fn exact_paths_and_a_trailing_segment_match() {
        assert_eq!(found("GET", "/v1/fetch"), Some((1, String::new())));
        assert_eq!(found("POST", "/v1/acquire"), Some((2, String::new())));
        assert_eq!(found("GET", "/v1/hosts/a.example:8080"), Some((3, "a.example:8080".into())));
        assert_eq!(found("GET", "/v1/hosts/"), Some((3, String::new())), "an empty segment is the handler's to refuse");
        assert_eq!(found("POST", "/v1/hosts/a.example"), Some((4, "a.example".into())));
        assert_eq!(found("GET", "/v1/fetch/"), None);
        assert_eq!(found("GET", "/v1/hosts"), None);
    }

    #[test]
    fn a_known_path_with_another_method_is_405_with_its_methods() {
        let allow = |method, path| match find(&TABLE, method, path) {
            Matched::WrongMethod { allow } => allow,
            other => panic!("{method} {path}: {other:?}"),
        };
        assert_eq!(allow("POST", "/v1/fetch"), "GET");
        assert_eq!(allow("HEAD", "/v1/fetch"), "GET");
        assert_eq!(allow("GET", "/v1/acquire"), "POST");
        assert_eq!(allow("DELETE", "/v1/hosts/a.example"), "GET, POST");
        let e = method_not_allowed("POST", "/v1/fetch", "GET");
        assert_eq!((e.status(), e.code), (405, Refusal::MethodNotAllowed));
        assert_eq!(e.message, "POST is not allowed on /v1/fetch (allowed: GET)");
    }

    #[test]
    fn the_admin_routes_put_and_delete_a_pattern_and_list_them_all() {
        const ADMIN: [Route<u8>; 4] = [
            Route::get("/v1/hosts/{host}", 1),
            Route::get("/v1/admin/hosts", 2),
            Route::put("/v1/admin/hosts/{pattern}", 3),
            Route::delete("/v1/admin/hosts/{pattern}", 4),
        ];
        let found = |method, path| match find(&ADMIN, method, path) {
            Matched::Found { route, param } => Some((route.handler, param.to_owned())),
            _ => None,
        };
        assert_eq!(found("GET", "/v1/admin/hosts"), Some((2, String::new())));
        assert_eq!(found("PUT", "/v1/admin/hosts/*.example.com"), Some((3, "*.example.com".into())));
        assert_eq!(found("DELETE", "/v1/admin/hosts/a.example:8080"), Some((4, "a.example:8080".into())));
        assert_eq!(found("GET", "/v1/hosts/admin"), Some((1, "admin".into())));
        assert_eq!(find(&ADMIN, "POST", "/v1/admin/hosts/a"), Matched::WrongMethod { allow: "PUT, DELETE".into() });
        assert_eq!(find(&ADMIN, "PUT", "/v1/admin/hosts"), Matched::WrongMethod { allow: "GET".into() });
    }

    #[test]
    fn an_unknown_path_is_404_listing_the_routes() {
        assert_eq!(find(&TABLE, "GET", "/v2/fetch"), Matched::NotFound);
        assert_eq!(find(&TABLE, "GET", "/"), Matched::NotFound);
        let e = not_found(&TABLE[..3], "GET", "/v2/fetch");
        assert_eq!((e.status(), e.code), (404, Refusal::NotFound));
        assert_eq!(
            e.message,
            "no route GET /v2/fetch (routes: GET /v1/fetch?url=, POST /v1/acquire, GET /v1/hosts/{host}, the \
             playground at /)"
        );
    }
}
