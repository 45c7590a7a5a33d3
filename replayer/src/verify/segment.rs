//! Method streams cut at the draws: each side's pushed words decoded into methods,
//! macro calls named side-independently, and the stream split after every draw
//! macro's call.

use driver::chipset::Chipset;
use driver::class;
use driver::nvk::state::StateGroup;
use driver::push::{self, ParseError, SUBC_3D};
use trace_format::generated::results::DrawKind;

use super::nvk;
use crate::replay::{Tape, TapeLabel};

/// One method as pushed, macro calls renumbered to NVK's ids (see [`canonical`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Method {
    /// The subchannel.
    pub subc: u8,
    /// The method's byte offset.
    pub mthd: u16,
    /// Its data.
    pub data: u32,
}

/// What pushed a method, as far as the model knows (NVK's methods take the part of
/// the model's method they line up with).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    /// A state group.
    Group(StateGroup),
    /// The draw's own call.
    Draw,
    /// Another command: renderings, barriers, queries, clears, copies.
    Commands,
}

impl Part {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Part::Group(g) => g.name(),
            Part::Draw => "draw call",
            Part::Commands => "other commands",
        }
    }
}

/// What a method's data is, beyond its method: where a root-table load lands, or
/// which parameter of a macro call it is. Reports name differences by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// Nothing more than the method.
    Plain,
    /// A `LOAD_CONSTANT_BUFFER` word, at this byte of the root table.
    Root(u32),
    /// A macro call's parameter, from 0.
    Param(u32),
}

/// Each method's [`Field`], following the load offset and the macro calls through
/// the whole stream.
pub fn fields(methods: &[Method]) -> Vec<Field> {
    let mut offset = 0u32;
    let mut param = 0u32;
    methods
        .iter()
        .map(|m| {
            if m.subc != SUBC_3D {
                return Field::Plain;
            }
            match m.mthd {
                class::LOAD_CONSTANT_BUFFER_OFFSET => {
                    offset = m.data & 0xffff;
                    Field::Plain
                }
                x if (class::load_constant_buffer(0)..class::load_constant_buffer(16))
                    .contains(&x) =>
                {
                    let at = offset;
                    offset = offset.wrapping_add(4);
                    Field::Root(at)
                }
                x if macro_id(m.subc, x).is_some() => {
                    param = if x % 8 == 0 { 0 } else { param + 1 };
                    Field::Param(param)
                }
                _ => Field::Plain,
            }
        })
        .collect()
}

/// The member of NVK 25.0.7's root table (`struct nvk_root_descriptor_table`) at
/// `offset`.
pub fn root_member(offset: u32) -> &'static str {
    match offset {
        0x00 => "draw.base_vertex",
        0x04 => "draw.base_instance",
        0x08 => "draw.draw_index",
        0x0c => "draw.view_index",
        0x10..=0x17 => "draw.sample_locations",
        0x18..=0x27 => "draw.sample_masks",
        0x28..=0x127 => "push",
        0x128..=0x327 => match (offset - 0x128) % 16 {
            0 => "sets[].base_addr (low)",
            4 => "sets[].base_addr (high)",
            8 => "sets[].size",
            _ => "sets[].zero",
        },
        0x328..=0x347 => "set_dynamic_buffer_start",
        // `union nvk_buffer_descriptor`: an address (low, high), a size and a zero
        // word, or a bindless constant buffer's address in 16-byte units (low, then
        // its high bits with the size in 16-byte units above them) and two zeros.
        0x348..=0x747 => match (offset - 0x348) % 16 {
            0 => "dynamic_buffers[].addr (low)",
            4 => "dynamic_buffers[].addr (high; a constant buffer's size above)",
            8 => "dynamic_buffers[].size",
            _ => "dynamic_buffers[].zero",
        },
        _ => "past the table",
    }
}

/// The methods up to and including one draw macro's call (or, last, what follows the
/// last one).
#[derive(Clone, Debug, Default)]
pub struct Segment {
    /// The methods, in order.
    pub methods: Vec<Method>,
    /// Each method's part (the model's side; empty on NVK's).
    pub parts: Vec<Part>,
    /// Each method's field.
    pub fields: Vec<Field>,
    /// The model's draw row that ends it (record and kind), when one does: a draw
    /// macro called with no row is a meta draw (a resolve, a blit).
    pub row: Option<(u64, DrawKind)>,
    /// The draw macro whose call ends it; `None` for the tail.
    pub draw_macro: Option<&'static str>,
    /// The GPU whose classes name its methods (the Turing classes' names without one).
    pub names: Option<Chipset>,
    /// Where the channel the methods ran on changed within the segment: the first
    /// method on it, and the channel.
    pub channels: Vec<(usize, u32)>,
}

impl Segment {
    /// Method `i`'s label in reports ([`super::label`]).
    pub fn label(&self, i: usize) -> String {
        super::label(
            self.methods[i],
            self.fields.get(i).copied().unwrap_or(Field::Plain),
            self.names.as_ref(),
        )
    }
}

/// Which numbering of macros a stream uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbering {
    /// NVK 25.0.7's `enum nvk_mme`.
    Nvk,
    /// The model's [`driver::nvk::Macro`].
    Model,
}

/// The macro a `CALL_MME_MACRO`/`CALL_MME_DATA` method addresses, if it is one.
pub fn macro_id(subc: u8, mthd: u16) -> Option<u16> {
    (subc == SUBC_3D && (class::CALL_MME_MACRO..0x4000).contains(&mthd))
        .then(|| (mthd - class::CALL_MME_MACRO) / 8)
}

/// A macro's name under `numbering`.
pub fn macro_name(numbering: Numbering, id: u16) -> Option<&'static str> {
    match numbering {
        Numbering::Nvk => nvk::nvk_macro_name(id),
        Numbering::Model => nvk::model_macro_name(id),
    }
}

/// The method with its macro call renumbered to NVK's id for the same macro (by name),
/// so that the two sides compare what they call, not how they number it. A model
/// macro NVK does not have keeps a number past NVK's (200 + its id).
pub fn canonical(numbering: Numbering, w: push::MethodWrite) -> Method {
    let mut mthd = w.mthd;
    if numbering == Numbering::Model {
        if let Some(id) = macro_id(w.subc, w.mthd) {
            let nvk_id = nvk::model_macro_name(id)
                .and_then(|name| nvk::MACROS.iter().position(|n| *n == name))
                .map_or(200 + id, |i| i as u16);
            mthd = class::CALL_MME_MACRO + 8 * nvk_id + (w.mthd % 8);
        }
    }
    Method {
        subc: w.subc,
        mthd,
        data: w.data,
    }
}

/// Decodes `words` into canonical methods.
pub fn decode(numbering: Numbering, words: &[u32]) -> Result<Vec<Method>, ParseError> {
    push::parse(words)
        .map(|w| w.map(|w| canonical(numbering, w)))
        .collect()
}

/// Splits methods after each draw macro's call (its `CALL_MME_MACRO` and the
/// `CALL_MME_DATA` that follow). `parts`, when not empty, runs beside `methods`.
pub fn split(methods: &[Method], parts: &[Part], switches: &[(usize, u32)]) -> Vec<Segment> {
    let fields = fields(methods);
    let mut segments = Vec::new();
    let mut current = Segment::default();
    let mut open_call: Option<u16> = None;
    let mut switches = switches.iter().peekable();
    for (i, m) in methods.iter().enumerate() {
        if let Some(call) = open_call {
            if !(m.subc == SUBC_3D && m.mthd == call + 4) {
                segments.push(std::mem::take(&mut current));
                open_call = None;
            }
        }
        while let Some(&(_, channel)) = switches.next_if(|(at, _)| *at <= i) {
            let at = current.methods.len();
            switch_at(&mut current.channels, at, channel);
        }
        current.methods.push(*m);
        current.fields.push(fields[i]);
        if let Some(p) = parts.get(i) {
            current.parts.push(*p);
        }
        if m.mthd % 8 == 0 {
            if let Some(name) = macro_id(m.subc, m.mthd)
                .and_then(nvk::nvk_macro_name)
                .filter(|name| nvk::DRAW_MACROS.contains(name))
            {
                current.draw_macro = Some(name);
                open_call = Some(m.mthd);
            }
        }
    }
    if open_call.is_some() {
        segments.push(std::mem::take(&mut current));
    }
    segments.push(current);
    segments
}

/// Notes in `switches` that from method `at` on the methods ran on `channel`: a later
/// change at the same method takes the place of one before it, and a change to the
/// channel running is none.
pub fn switch_at(switches: &mut Vec<(usize, u32)>, at: usize, channel: u32) {
    if switches.last().is_some_and(|s| s.0 == at) {
        switches.pop();
    }
    if switches.last().map(|s| s.1) != Some(channel) {
        switches.push((at, channel));
    }
}

/// The model's tape as segments, each method with its part, each draw segment with
/// the row that ends it.
pub fn model_segments(tape: &Tape) -> Result<Vec<Segment>, ParseError> {
    let mut methods = Vec::new();
    let mut parts = Vec::new();
    // Where each row's call ends, in methods.
    let mut rows: Vec<(usize, u64, DrawKind)> = Vec::new();
    let mut start = 0usize;
    // Where each span ends, in words and in methods.
    let mut span_ends: Vec<(usize, usize)> = Vec::with_capacity(tape.spans.len());
    for &(end, label) in &tape.spans {
        let decoded = decode(Numbering::Model, &tape.words[start..end])?;
        start = end;
        span_ends.push((end, methods.len() + decoded.len()));
        let part = match label {
            TapeLabel::Group(g) => Part::Group(g),
            TapeLabel::Row { kind, .. } if trace_format::names::is_draw_kind(kind) => Part::Draw,
            _ => Part::Commands,
        };
        parts.extend(std::iter::repeat_n(part, decoded.len()));
        methods.extend(decoded);
        if let TapeLabel::Row { seq, kind } = label {
            if trace_format::names::is_draw_kind(kind) {
                rows.push((methods.len(), seq, kind));
            }
        }
    }
    // The model's first channel is 0, where its tape names none.
    let mut switches = vec![(0, 0)];
    let mut spans_before = 0;
    for &(word, channel) in &tape.channels {
        while span_ends
            .get(spans_before)
            .is_some_and(|&(end, _)| end <= word)
        {
            spans_before += 1;
        }
        let at = spans_before.checked_sub(1).map_or(0, |k| span_ends[k].1);
        switch_at(&mut switches, at, channel);
    }
    let mut segments = split(&methods, &parts, &switches);
    let mut at = 0usize;
    let mut rows = rows.into_iter().peekable();
    for s in &mut segments {
        at += s.methods.len();
        while rows.peek().is_some_and(|(end, _, _)| *end < at) {
            rows.next();
        }
        if s.draw_macro.is_some() && rows.peek().is_some_and(|(end, _, _)| *end == at) {
            s.row = rows.next().map(|(_, seq, kind)| (seq, kind));
        }
    }
    Ok(segments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use driver::nvk::Macro;

    fn m(mthd: u16, data: u32) -> Method {
        Method {
            subc: SUBC_3D,
            mthd,
            data,
        }
    }

    #[test]
    fn splits_after_each_draw_call_and_its_data() {
        let draw = class::CALL_MME_MACRO + 8 * 10;
        let bind_vb = class::CALL_MME_MACRO + 8 * 4;
        let methods = [
            m(0x1000, 1),
            m(bind_vb, 0),
            m(bind_vb + 4, 1),
            m(draw, 0),
            m(draw + 4, 3),
            m(draw + 4, 1),
            m(0x2000, 2),
            m(draw, 0),
            m(0x3000, 5),
        ];
        let segments = split(&methods, &[], &[]);
        let lens: Vec<usize> = segments.iter().map(|s| s.methods.len()).collect();
        assert_eq!(lens, vec![6, 2, 1]);
        assert_eq!(segments[0].draw_macro, Some("draw"));
        assert_eq!(segments[2].draw_macro, None);
    }

    /// A program's work on three channels in turn (VLC's three devices): each segment
    /// says where, among its methods, the channel changed, so that its macros run on
    /// the channel they ran on.
    #[test]
    fn each_segment_carries_the_channel_changes_within_it() {
        let draw = class::CALL_MME_MACRO + 8 * 10;
        let methods = [
            m(0x1000, 1),
            m(draw, 0),
            m(draw + 4, 3),
            m(0x2000, 2),
            m(draw, 0),
            m(0x3000, 5),
        ];
        // Channel 4 from the start, 8 from the second draw's state on, 12 for the tail.
        let mut switches = Vec::new();
        switch_at(&mut switches, 0, 4);
        switch_at(&mut switches, 3, 7);
        // A second change at the same method takes the first's place.
        switch_at(&mut switches, 3, 8);
        switch_at(&mut switches, 5, 12);
        // A change to the channel running is none.
        switch_at(&mut switches, 5, 12);
        assert_eq!(switches, [(0, 4), (3, 8), (5, 12)]);
        let segments = split(&methods, &[], &switches);
        let channels: Vec<&[(usize, u32)]> =
            segments.iter().map(|s| s.channels.as_slice()).collect();
        assert_eq!(channels, [&[(0, 4)][..], &[(0, 8)], &[(0, 12)]]);
    }

    #[test]
    fn model_macro_calls_take_nvk_ids_by_name() {
        let model_draw = class::call_mme_macro(Macro::Draw.id());
        let w = push::MethodWrite {
            subc: SUBC_3D,
            mthd: model_draw + 4,
            data: 9,
        };
        assert_eq!(
            canonical(Numbering::Model, w).mthd,
            class::CALL_MME_MACRO + 8 * 10 + 4
        );
        assert_eq!(canonical(Numbering::Nvk, w).mthd, model_draw + 4);
    }
}
