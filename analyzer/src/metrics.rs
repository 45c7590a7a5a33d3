//! The per-draw metrics a results file holds.

use trace_format::Row;

/// A per-draw metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// MME instructions the draw's macro executed.
    MmeInstructions,
    /// Methods executed (pushed and macro-emitted).
    Methods,
    /// Push-buffer dwords the encoder wrote.
    PushbufDwords,
    /// Hardware draws started.
    HwDraws,
    /// Host time encoding the draw.
    EncodeNs,
    /// Host time executing it on the GPU model (the macro included).
    MmeNs,
    /// Host time in the macro's multiview loop.
    MultiviewNs,
    /// GPU time of the draw on a real device (`replay --device --gpu-timing`).
    GpuNs,
}

impl Metric {
    /// Every metric.
    pub const ALL: [Metric; 8] = [
        Metric::MmeInstructions,
        Metric::Methods,
        Metric::PushbufDwords,
        Metric::HwDraws,
        Metric::EncodeNs,
        Metric::MmeNs,
        Metric::MultiviewNs,
        Metric::GpuNs,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Metric::MmeInstructions => "mme-instructions",
            Metric::Methods => "methods",
            Metric::PushbufDwords => "dwords",
            Metric::HwDraws => "hw-draws",
            Metric::EncodeNs => "encode-ns",
            Metric::MmeNs => "execute-ns",
            Metric::MultiviewNs => "multiview-ns",
            Metric::GpuNs => "gpu-ns",
        }
    }

    /// The metric called `name`.
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The unit, for tables and axes.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::MmeInstructions => "instructions",
            Metric::Methods => "methods",
            Metric::PushbufDwords => "dwords",
            Metric::HwDraws => "draws",
            Metric::EncodeNs | Metric::MmeNs | Metric::MultiviewNs | Metric::GpuNs => "ns",
        }
    }

    /// Host timings vary run to run; counts do not.
    pub fn is_timing(self) -> bool {
        matches!(
            self,
            Metric::EncodeNs | Metric::MmeNs | Metric::MultiviewNs | Metric::GpuNs
        )
    }

    /// The metric's value in a row.
    pub fn of(self, row: &Row) -> u64 {
        match self {
            Metric::MmeInstructions => row.mme_instructions().into(),
            Metric::Methods => row.methods().into(),
            Metric::PushbufDwords => row.pushbuf_dwords().into(),
            Metric::HwDraws => row.hw_draws().into(),
            Metric::EncodeNs => row.encode_ns(),
            Metric::MmeNs => row.mme_ns(),
            Metric::MultiviewNs => row.multiview_ns(),
            Metric::GpuNs => row.gpu_ns,
        }
    }
}

/// A row kind's name: the Vulkan command the row comes from.
pub use trace_format::names::row_kind_name as kind_name;
