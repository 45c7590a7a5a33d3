//! The GPUs NVK drives, as the nouveau kernel presents them: each chipset's name and
//! the classes its channel offers (3D, compute, copy, inline-to-memory), which NVK reads
//! into `nv_device_info` (`cls_eng3d`, `cls_compute`, `cls_copy`, `cls_m2mf`) and
//! compares against class numbers wherever a generation pushes something of its own.
//!
//! The classes are the ones Linux's nouveau kernel lists for each chipset
//! (`nvkm/engine/device/base.c` names each chipset's graphics and copy engines; each
//! engine's `sclass` list names their classes). NVK takes the highest class of each
//! kind the channel offers (`nouveau_ws_context_find_class`).

use crate::class::Class3d;
use crate::mme::Arch;

/// Class numbers NVK compares against (NVIDIA's class headers).
pub mod classes {
    /// Kepler GK104's 3D class.
    pub const KEPLER_A: u16 = 0xa097;
    /// Kepler GK110/GK208's 3D class.
    pub const KEPLER_B: u16 = 0xa197;
    /// Maxwell GM107's 3D class.
    pub const MAXWELL_A: u16 = 0xb097;
    /// Maxwell GM200's 3D class.
    pub const MAXWELL_B: u16 = 0xb197;
    /// Pascal GP100's 3D class.
    pub const PASCAL_A: u16 = 0xc097;
    /// Pascal GP102–GP108's 3D class.
    pub const PASCAL_B: u16 = 0xc197;
    /// Volta GV100's 3D class.
    pub const VOLTA_A: u16 = 0xc397;
    /// Turing's 3D class.
    pub const TURING_A: u16 = 0xc597;
    /// Ampere GA102's 3D class.
    pub const AMPERE_B: u16 = 0xc797;
    /// Ada's 3D class.
    pub const ADA_A: u16 = 0xc997;

    /// Kepler GK104's compute class.
    pub const KEPLER_COMPUTE_A: u16 = 0xa0c0;
    /// Kepler GK110/GK208's compute class.
    pub const KEPLER_COMPUTE_B: u16 = 0xa1c0;
    /// Maxwell GM107's compute class.
    pub const MAXWELL_COMPUTE_A: u16 = 0xb0c0;
    /// Maxwell GM200's compute class.
    pub const MAXWELL_COMPUTE_B: u16 = 0xb1c0;
    /// Pascal GP100's compute class.
    pub const PASCAL_COMPUTE_A: u16 = 0xc0c0;
    /// Pascal GP102–GP108's compute class.
    pub const PASCAL_COMPUTE_B: u16 = 0xc1c0;
    /// Volta's compute class.
    pub const VOLTA_COMPUTE_A: u16 = 0xc3c0;
    /// Turing's compute class.
    pub const TURING_COMPUTE_A: u16 = 0xc5c0;
    /// Ampere GA102's compute class.
    pub const AMPERE_COMPUTE_B: u16 = 0xc7c0;
    /// Ada's compute class.
    pub const ADA_COMPUTE_A: u16 = 0xc9c0;

    /// Kepler's copy engine.
    pub const KEPLER_DMA_COPY_A: u16 = 0xa0b5;
    /// Maxwell's copy engine.
    pub const MAXWELL_DMA_COPY_A: u16 = 0xb0b5;
    /// Pascal GP100's copy engine.
    pub const PASCAL_DMA_COPY_A: u16 = 0xc0b5;
    /// Pascal GP102–GP108's copy engine.
    pub const PASCAL_DMA_COPY_B: u16 = 0xc1b5;
    /// Volta's copy engine.
    pub const VOLTA_DMA_COPY_A: u16 = 0xc3b5;
    /// Turing's copy engine.
    pub const TURING_DMA_COPY_A: u16 = 0xc5b5;
    /// Ampere GA102's and Ada's copy engine.
    pub const AMPERE_DMA_COPY_B: u16 = 0xc7b5;

    /// Kepler GK104's inline-to-memory class.
    pub const KEPLER_INLINE_TO_MEMORY_A: u16 = 0xa040;
    /// The inline-to-memory class from Kepler GK110 on.
    pub const KEPLER_INLINE_TO_MEMORY_B: u16 = 0xa140;
    /// The 2D class every generation offers.
    pub const FERMI_TWOD_A: u16 = 0x902d;
}

use classes::*;

/// A GPU as NVK sees it: its chipset and the classes its channel offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chipset {
    /// The chipset id (`NOUVEAU_GETPARAM_CHIPSET_ID`, e.g. 0x162).
    pub id: u16,
    /// The chip's name, e.g. `TU102`.
    pub name: &'static str,
    /// The 3D class (`cls_eng3d`).
    pub eng3d: u16,
    /// The compute class (`cls_compute`).
    pub compute: u16,
    /// The copy engine's class (`cls_copy`).
    pub copy: u16,
    /// The inline-to-memory class (`cls_m2mf`).
    pub m2mf: u16,
}

const fn chip(id: u16, name: &'static str, engines: (u16, u16, u16, u16)) -> Chipset {
    Chipset {
        id,
        name,
        eng3d: engines.0,
        compute: engines.1,
        copy: engines.2,
        m2mf: engines.3,
    }
}

/// Each family's engines: 3D, compute, copy, inline-to-memory.
const GK104: (u16, u16, u16, u16) = (
    KEPLER_A,
    KEPLER_COMPUTE_A,
    KEPLER_DMA_COPY_A,
    KEPLER_INLINE_TO_MEMORY_A,
);
const GK110: (u16, u16, u16, u16) = (
    KEPLER_B,
    KEPLER_COMPUTE_B,
    KEPLER_DMA_COPY_A,
    KEPLER_INLINE_TO_MEMORY_B,
);
const GM107: (u16, u16, u16, u16) = (
    MAXWELL_A,
    MAXWELL_COMPUTE_A,
    MAXWELL_DMA_COPY_A,
    KEPLER_INLINE_TO_MEMORY_B,
);
const GM200: (u16, u16, u16, u16) = (
    MAXWELL_B,
    MAXWELL_COMPUTE_B,
    MAXWELL_DMA_COPY_A,
    KEPLER_INLINE_TO_MEMORY_B,
);
const GP100: (u16, u16, u16, u16) = (
    PASCAL_A,
    PASCAL_COMPUTE_A,
    PASCAL_DMA_COPY_A,
    KEPLER_INLINE_TO_MEMORY_B,
);
const GP102: (u16, u16, u16, u16) = (
    PASCAL_B,
    PASCAL_COMPUTE_B,
    PASCAL_DMA_COPY_B,
    KEPLER_INLINE_TO_MEMORY_B,
);
const GV100: (u16, u16, u16, u16) = (
    VOLTA_A,
    VOLTA_COMPUTE_A,
    VOLTA_DMA_COPY_A,
    KEPLER_INLINE_TO_MEMORY_B,
);
const TU102: (u16, u16, u16, u16) = (
    TURING_A,
    TURING_COMPUTE_A,
    TURING_DMA_COPY_A,
    KEPLER_INLINE_TO_MEMORY_B,
);
const GA102: (u16, u16, u16, u16) = (
    AMPERE_B,
    AMPERE_COMPUTE_B,
    AMPERE_DMA_COPY_B,
    KEPLER_INLINE_TO_MEMORY_B,
);
const AD102: (u16, u16, u16, u16) = (
    ADA_A,
    ADA_COMPUTE_A,
    AMPERE_DMA_COPY_B,
    KEPLER_INLINE_TO_MEMORY_B,
);

/// The chipsets NVK 25.0.7 drives (Kepler to Ada; GA100 and Hopper have no 3D
/// engine, Tegra's are left out), oldest first.
pub const CHIPSETS: &[Chipset] = &[
    chip(0x0e4, "GK104", GK104),
    chip(0x0e6, "GK106", GK104),
    chip(0x0e7, "GK107", GK104),
    chip(0x0f0, "GK110", GK110),
    chip(0x0f1, "GK110B", GK110),
    chip(0x106, "GK208B", GK110),
    chip(0x108, "GK208", GK110),
    chip(0x117, "GM107", GM107),
    chip(0x118, "GM108", GM107),
    chip(0x120, "GM200", GM200),
    chip(0x124, "GM204", GM200),
    chip(0x126, "GM206", GM200),
    chip(0x130, "GP100", GP100),
    chip(0x132, "GP102", GP102),
    chip(0x134, "GP104", GP102),
    chip(0x136, "GP106", GP102),
    chip(0x137, "GP107", GP102),
    chip(0x138, "GP108", GP102),
    chip(0x140, "GV100", GV100),
    chip(0x162, "TU102", TU102),
    chip(0x164, "TU104", TU102),
    chip(0x166, "TU106", TU102),
    chip(0x167, "TU117", TU102),
    chip(0x168, "TU116", TU102),
    chip(0x172, "GA102", GA102),
    chip(0x173, "GA103", GA102),
    chip(0x174, "GA104", GA102),
    chip(0x176, "GA106", GA102),
    chip(0x177, "GA107", GA102),
    chip(0x192, "AD102", AD102),
    chip(0x193, "AD103", AD102),
    chip(0x194, "AD104", AD102),
    chip(0x196, "AD106", AD102),
    chip(0x197, "AD107", AD102),
];

/// One chipset of each generation, as `macroscope verify` and the corpus run them.
pub const REPRESENTATIVES: [u16; 8] = [0x0e4, 0x117, 0x120, 0x134, 0x140, 0x162, 0x172, 0x192];

impl Chipset {
    /// The chipset with this id.
    pub fn find(id: u16) -> Option<Chipset> {
        CHIPSETS.iter().copied().find(|c| c.id == id)
    }

    /// The alignment of a constant buffer's address and size, and so of a descriptor
    /// set's size and a shader's constant data (nvk_min_cbuf_alignment: 64 bytes from
    /// TURING_A on, 256 before).
    pub fn min_cbuf_alignment(self) -> u32 {
        if self.eng3d >= TURING_A {
            64
        } else {
            256
        }
    }

    /// A chipset by its name (`ga102`, any case) or id (`0x172`).
    pub fn parse(s: &str) -> Result<Chipset, String> {
        let hex = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"));
        let found = match hex {
            Some(digits) => u16::from_str_radix(digits, 16).ok().and_then(Chipset::find),
            None => CHIPSETS
                .iter()
                .copied()
                .find(|c| c.name.eq_ignore_ascii_case(s)),
        };
        found.ok_or_else(|| {
            let names: Vec<String> = REPRESENTATIVES
                .iter()
                .filter_map(|&id| Chipset::find(id))
                .map(|c| format!("{} ({:#x})", c.name.to_ascii_lowercase(), c.id))
                .collect();
            format!(
                "`{s}` is not a chipset NVK drives; one of each generation: {}",
                names.join(", ")
            )
        })
    }

    /// The GPU that stands for an MME generation: a Turing TU102, or before Turing a
    /// Volta GV100.
    pub fn for_arch(arch: Arch) -> Chipset {
        let id = match arch {
            Arch::Turing => 0x162,
            Arch::Fermi => 0x140,
        };
        Chipset::find(id).unwrap_or_else(|| unreachable!("both are in CHIPSETS"))
    }

    /// The MME instruction set: Turing's from TURING_A on, Fermi's before.
    pub fn arch(&self) -> Arch {
        self.class3d().mme_arch()
    }

    /// The 3D class.
    pub fn class3d(&self) -> Class3d {
        Class3d::find(self.eng3d).unwrap_or_else(|| unreachable!("every 3D class is listed"))
    }

    /// The generation's name, e.g. `Turing`.
    pub fn generation(&self) -> &'static str {
        match self.eng3d {
            KEPLER_A | KEPLER_B => "Kepler",
            MAXWELL_A | MAXWELL_B => "Maxwell",
            PASCAL_A | PASCAL_B => "Pascal",
            VOLTA_A => "Volta",
            TURING_A => "Turing",
            AMPERE_B => "Ampere",
            _ => "Ada",
        }
    }

    /// For people: `TU102 (0x162, Turing)`.
    pub fn describe(&self) -> String {
        format!("{} ({:#x}, {})", self.name, self.id, self.generation())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chipset_is_found_by_name_or_id_and_an_unknown_one_is_named() {
        assert_eq!(Chipset::parse("ga102").unwrap().id, 0x172);
        assert_eq!(Chipset::parse("0x192").unwrap().name, "AD102");
        assert_eq!(Chipset::parse("TU102").unwrap().eng3d, TURING_A);
        let err = Chipset::parse("0x999").unwrap_err();
        assert!(
            err.contains("0x999") && err.contains("ga102 (0x172)"),
            "{err}"
        );
        assert!(Chipset::parse("gb202").is_err());
    }

    #[test]
    fn each_generation_has_its_mme_and_the_classes_nvk_compares() {
        for &id in &REPRESENTATIVES {
            let c = Chipset::find(id).unwrap();
            let turing_on = c.eng3d >= TURING_A;
            assert_eq!(c.arch() == Arch::Turing, turing_on, "{c:?}");
            // Each engine's class belongs to its generation: compute and 3D share
            // the high byte, copy classes end in b5.
            assert_eq!(c.compute >> 8, c.eng3d >> 8, "{c:?}");
            assert_eq!(c.copy & 0xff, 0xb5, "{c:?}");
        }
        assert_eq!(Chipset::for_arch(Arch::Fermi).eng3d, VOLTA_A);
    }
}
