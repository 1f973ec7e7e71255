//! robots.txt matching on a large file: `cargo bench --bench robots`.
//!
//! The file: 9,000 rules in the group of the crawler, and as many in a `*` group, about 500 KiB: plain prefixes,
//! prefixes with a wildcard and an anchor after them, and one rule in 40 starting with a wildcard (`/*/…`), which
//! every path must try. `parse` reads and compiles it once; `allows` then decides one URL — one the
//! file disallows near its end, one it allows (no rule matches: every rule is tried), and a path given alone.
//!
//! Two hostile files of 500 KiB: one of about 28,000 rules in one group, in descending order (each compiled rule
//! ranks before all those read so far), and one of about 25,000 rules that all start with a wildcard and never
//! match, so that `allows` tries every one of them.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hostpace::robots::{Robots, MAX_ROBOTS_BYTES};
use std::hint::black_box;

fn large_file() -> String {
    let mut text = String::new();
    for agent in ["examplebot", "*"] {
        text += &format!("User-agent: {agent}\n");
        for i in 0..9_000 {
            text += &match i % 40 {
                39 => format!("Disallow: /*/s{i}?session=*\n"),
                k if k % 3 == 0 => format!("Disallow: /s{i}/private/\n"),
                k if k % 3 == 1 => format!("Allow: /s{i}/private/open\n"),
                _ => format!("Disallow: /s{i}/*.php$\n"),
            };
        }
        text += "\n";
    }
    assert!(text.len() <= MAX_ROBOTS_BYTES, "{} bytes", text.len());
    text
}

fn robots(c: &mut Criterion) {
    let text = large_file();
    let mut g = c.benchmark_group("robots");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("parse 18,000 rules", |b| b.iter(|| black_box(Robots::parse(black_box(&text)))));
    g.throughput(Throughput::Elements(1));
    let robots = Robots::parse(&text);
    let ua = "ExampleBot/2.1 (+https://example.com/bot)";
    assert!(!robots.allows(ua, "https://example.com/s8998/x.php"));
    assert!(robots.allows(ua, "https://example.com/nothing/here"));
    g.bench_function("allows, URL disallowed", |b| {
        b.iter(|| black_box(robots.allows(ua, black_box("https://example.com/s8998/x.php"))))
    });
    g.bench_function("allows, URL no rule matches", |b| {
        b.iter(|| black_box(robots.allows(ua, black_box("https://example.com/nothing/here"))))
    });
    g.bench_function("allows, path no rule matches", |b| {
        b.iter(|| black_box(robots.allows(ua, black_box("/nothing/here?q=1"))))
    });
    g.finish();

    let mut g = c.benchmark_group("robots, hostile files");
    g.sample_size(10);
    let descending = hostile_file(|i| format!("Disallow: /{:06}\n", 999_999 - i));
    assert!(Robots::parse(&descending).rule_count() > 28_000);
    g.bench_function("parse 28,000 rules in descending order", |b| {
        b.iter(|| black_box(Robots::parse(black_box(&descending))))
    });
    let wildcards = Robots::parse(&hostile_file(|i| format!("Disallow: /*{i}*x$\n")));
    assert!(wildcards.rule_count() > 24_000, "{}", wildcards.rule_count());
    g.bench_function("allows against 25,000 wildcard rules", |b| {
        b.iter(|| black_box(wildcards.allows(ua, black_box("https://example.com/a/long/path/that/matches/none"))))
    });
    g.finish();
}

/// `User-agent: *` and rules `rule(0)`, `rule(1)`, … up to 500 KiB.
fn hostile_file(rule: impl Fn(usize) -> String) -> String {
    let mut text = String::from("User-agent: *\n");
    for i in 0.. {
        let line = rule(i);
        if text.len() + line.len() > MAX_ROBOTS_BYTES {
            break;
        }
        text += &line;
    }
    text
}

criterion_group!(benches, robots);
criterion_main!(benches);
