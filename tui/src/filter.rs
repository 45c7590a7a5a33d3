//! The draw table's filter: space-separated terms that must all hold, each either a
//! comparison (`mme>100`, `views=4`, `submit!=0`) or a word the draw kind's name
//! contains (`indexed`, `count`).

use analyzer::metrics::kind_name;
use trace_format::generated::results::DrawRow;

/// A parsed filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    text: String,
    terms: Vec<Term>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Term {
    KindContains(String),
    Compare(Field, Op, u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// The row fields a comparison can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Seq,
    Submit,
    Views,
    Mask,
    Instances,
    Elements,
    Indirect,
    Mme,
    Methods,
    Dwords,
    HwDraws,
    Queries,
    EncodeNs,
    ExecNs,
    HostNs,
    Pipeline,
}

const FIELDS: [(&str, Field); 16] = [
    ("seq", Field::Seq),
    ("submit", Field::Submit),
    ("views", Field::Views),
    ("mask", Field::Mask),
    ("inst", Field::Instances),
    ("elements", Field::Elements),
    ("indirect", Field::Indirect),
    ("mme", Field::Mme),
    ("methods", Field::Methods),
    ("dwords", Field::Dwords),
    ("hw", Field::HwDraws),
    ("queries", Field::Queries),
    ("encode", Field::EncodeNs),
    ("exec", Field::ExecNs),
    ("ns", Field::HostNs),
    ("pipeline", Field::Pipeline),
];

/// The names a comparison may use, for help text.
pub fn field_names() -> impl Iterator<Item = &'static str> {
    FIELDS.iter().map(|(name, _)| *name)
}

impl Field {
    fn of(self, row: &DrawRow) -> u64 {
        match self {
            Field::Seq => row.seq(),
            Field::Submit => row.submit().into(),
            Field::Views => row.view_count().into(),
            Field::Mask => row.view_mask().into(),
            Field::Instances => row.instance_count().into(),
            Field::Elements => row.element_count().into(),
            Field::Indirect => row.indirect_draw_count().into(),
            Field::Mme => row.mme_instructions().into(),
            Field::Methods => row.methods().into(),
            Field::Dwords => row.pushbuf_dwords().into(),
            Field::HwDraws => row.hw_draws().into(),
            Field::Queries => row.queries().into(),
            Field::EncodeNs => row.encode_ns(),
            Field::ExecNs => row.mme_ns(),
            Field::HostNs => host_ns(row),
            Field::Pipeline => row.pipeline(),
        }
    }
}

/// Host time of a draw: encoding plus execution on the model.
pub fn host_ns(row: &DrawRow) -> u64 {
    row.encode_ns().saturating_add(row.mme_ns())
}

impl Filter {
    /// Parses `text`; the error says which term is wrong and why.
    pub fn parse(text: &str) -> Result<Filter, String> {
        let terms = text
            .split_whitespace()
            .map(parse_term)
            .collect::<Result<_, _>>()?;
        Ok(Filter {
            text: text.trim().to_string(),
            terms,
        })
    }

    /// The filter that keeps every row.
    pub fn none() -> Filter {
        Filter {
            text: String::new(),
            terms: Vec::new(),
        }
    }

    /// The text it was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether it keeps every row.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether `row` passes.
    pub fn matches(&self, row: &DrawRow) -> bool {
        self.terms.iter().all(|term| match term {
            Term::KindContains(word) => kind_name(row.kind()).to_ascii_lowercase().contains(word),
            Term::Compare(field, op, value) => {
                let x = field.of(row);
                match op {
                    Op::Eq => x == *value,
                    Op::Ne => x != *value,
                    Op::Lt => x < *value,
                    Op::Le => x <= *value,
                    Op::Gt => x > *value,
                    Op::Ge => x >= *value,
                }
            }
        })
    }
}

fn parse_term(term: &str) -> Result<Term, String> {
    let Some(at) = term.find(['=', '!', '<', '>']) else {
        return Ok(Term::KindContains(term.to_ascii_lowercase()));
    };
    let (name, rest) = term.split_at(at);
    let (op, value) = [
        ("!=", Op::Ne),
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("=", Op::Eq),
        ("<", Op::Lt),
        (">", Op::Gt),
    ]
    .into_iter()
    .find_map(|(text, op)| rest.strip_prefix(text).map(|v| (op, v)))
    .ok_or_else(|| format!("`{term}`: expected =, !=, <, <=, > or >="))?;
    let field = FIELDS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, f)| *f)
        .ok_or_else(|| {
            let names: Vec<_> = field_names().collect();
            format!("`{name}` is not a field (try {})", names.join(", "))
        })?;
    let value = parse_number(value).ok_or_else(|| format!("`{value}` is not a number"))?;
    Ok(Term::Compare(field, op, value))
}

fn parse_number(text: &str) -> Option<u64> {
    match text.strip_prefix("0b") {
        Some(bits) => u64::from_str_radix(bits, 2).ok(),
        None => match text.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => text.replace('_', "").parse().ok(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace_format::generated::results::DrawKind;

    fn row(kind: DrawKind, views: u8, mme: u32) -> DrawRow {
        let mask = (1u32 << views) - 1;
        DrawRow::new(
            7, 0, 0, 1, 0, kind, views, mask, 1, 3, 1, mme, 10, 12, 1, 0, 0, 5, 6, 0, 0,
        )
    }

    #[test]
    fn terms_combine_comparisons_and_kind_words() {
        let f = Filter::parse("indexed views>=2 mme<500").unwrap();
        assert!(f.matches(&row(DrawKind::DrawIndexed, 2, 100)));
        assert!(f.matches(&row(DrawKind::DrawIndexedIndirect, 4, 499)));
        assert!(!f.matches(&row(DrawKind::Draw, 4, 100)));
        assert!(!f.matches(&row(DrawKind::DrawIndexed, 1, 100)));
        assert!(!f.matches(&row(DrawKind::DrawIndexed, 2, 500)));
    }

    #[test]
    fn masks_read_in_binary_and_hex() {
        let f = Filter::parse("mask=0b1111").unwrap();
        assert!(f.matches(&row(DrawKind::Draw, 4, 1)));
        assert!(Filter::parse("mask=0xf")
            .unwrap()
            .matches(&row(DrawKind::Draw, 4, 1)));
        assert!(Filter::parse("ns=11")
            .unwrap()
            .matches(&row(DrawKind::Draw, 4, 1)));
    }

    #[test]
    fn mistakes_are_named() {
        assert!(Filter::parse("colour=3")
            .unwrap_err()
            .contains("`colour` is not a field"));
        assert!(Filter::parse("mme>lots")
            .unwrap_err()
            .contains("`lots` is not a number"));
        assert!(Filter::parse("mme!3").unwrap_err().contains("expected ="));
        assert!(Filter::parse("   ").unwrap().is_empty());
    }
}
