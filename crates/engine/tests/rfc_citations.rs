//! The RFC citations in `src/tcp` say which sentence of which RFC the code
//! below them implements, in a form a script can list:
//!
//! ```text
//! // RFC 6675 §5: "(4.1) RecoveryPoint = HighData"
//! // RFC 8985 §6.2 (paraphrased): a packet is lost once ...
//! ```
//!
//! A citation is a `//` comment line (not a doc comment) that begins
//! `RFC <number> §<section>`; the comment lines right below it (up to the
//! next citation) continue it. A citation quotes the RFC's own words
//! between double quotes; where the code follows the RFC only in spirit, or
//! the exact wording was not checked, it says `(paraphrased)` and carries no
//! quote marks around its text. List them with
//! `grep -rn -A3 '// RFC [0-9]* §' crates/engine/src/tcp`.

use std::fs;
use std::path::Path;

#[derive(Debug)]
struct Citation {
    place: String,
    rfc: u32,
    section: String,
    paraphrased: bool,
    text: String,
}

/// The `//` comment text of a line (None for code, doc comments, blanks).
fn comment(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.starts_with("///") || t.starts_with("//!") {
        return None;
    }
    t.strip_prefix("//").map(str::trim)
}

/// `RFC <number> §<section>` at the start of a comment: the number, the
/// section and the rest of the comment.
fn head(c: &str) -> Option<(u32, &str, &str)> {
    let rest = c.strip_prefix("RFC ")?;
    let digits = rest.len()
        - rest
            .trim_start_matches(|ch: char| ch.is_ascii_digit())
            .len();
    if digits == 0 {
        return None;
    }
    let rfc = rest[..digits].parse().ok()?;
    let rest = rest[digits..].strip_prefix(" §")?;
    let end = rest
        .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '.'))
        .unwrap_or(rest.len());
    Some((rfc, &rest[..end], &rest[end..]))
}

fn citations_in(path: &Path, out: &mut Vec<Citation>, bad: &mut Vec<String>) {
    let src = fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = src.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let Some((rfc, section, rest)) = comment(lines[i]).and_then(head) else {
            i += 1;
            continue;
        };
        let place = format!("{}:{}", path.display(), i + 1);
        let (paraphrased, rest) = match rest.strip_prefix(" (paraphrased)") {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let Some(rest) = rest.strip_prefix(": ") else {
            bad.push(format!("{place}: no ': ' after the section"));
            i += 1;
            continue;
        };
        let mut text = rest.to_string();
        i += 1;
        while let Some(c) = lines.get(i).and_then(|l| comment(l)) {
            if c.is_empty() || head(c).is_some() {
                break;
            }
            text.push(' ');
            text.push_str(c);
            i += 1;
        }
        out.push(Citation {
            place,
            rfc,
            section: section.to_string(),
            paraphrased,
            text,
        });
    }
}

fn walk(dir: &Path, out: &mut Vec<Citation>, bad: &mut Vec<String>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out, bad);
        } else if p.extension().is_some_and(|e| e == "rs") {
            citations_in(&p, out, bad);
        }
    }
}

#[test]
fn tcp_cites_the_rfc_sentences_it_implements() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tcp");
    let (mut cites, mut bad) = (Vec::new(), Vec::new());
    walk(&root, &mut cites, &mut bad);
    for c in &cites {
        let place = &c.place;
        if c.section.is_empty() || !c.section.starts_with(|ch: char| ch.is_ascii_digit()) {
            bad.push(format!("{place}: RFC {} names no section", c.rfc));
        }
        let t = c.text.trim();
        let quoted = t.len() > 2 && t.starts_with('"') && t.ends_with('"');
        if c.paraphrased {
            if t.starts_with('"') {
                bad.push(format!("{place}: a paraphrase in quote marks"));
            }
            if t.len() < 20 {
                bad.push(format!("{place}: the paraphrase says nothing"));
            }
        } else if !quoted {
            bad.push(format!(
                "{place}: RFC {} §{}: the text is not quoted (or say `(paraphrased)`)",
                c.rfc, c.section
            ));
        } else if t.len() < 20 {
            bad.push(format!("{place}: the quote is too short to say anything"));
        }
        println!(
            "{place}: RFC {} §{}{}: {t}",
            c.rfc,
            c.section,
            if c.paraphrased { " (paraphrased)" } else { "" }
        );
    }
    assert!(bad.is_empty(), "malformed citations:\n{}", bad.join("\n"));
    let quoted = cites.iter().filter(|c| !c.paraphrased).count();
    assert!(
        quoted >= 20,
        "only {quoted} quoted citations in src/tcp (of {})",
        cites.len()
    );
    for rfc in [5681, 6298, 6582, 6675, 3042, 3168, 8985, 8312] {
        assert!(
            cites.iter().any(|c| c.rfc == rfc),
            "no citation of RFC {rfc} in src/tcp"
        );
    }
}
