//! The register allocator: a bitmask of registers that exist and of those in use.

use super::value::Reg;

/// Allocates machine registers for a builder.
#[derive(Clone, Debug)]
pub struct RegAlloc {
    exists: u32,
    in_use: u32,
}

impl RegAlloc {
    /// An allocator over the registers whose bits are set in `exists`.
    pub fn new(exists: u32) -> Self {
        RegAlloc { exists, in_use: 0 }
    }

    /// The lowest free register, if any.
    pub fn alloc(&mut self) -> Option<Reg> {
        let free = self.exists & !self.in_use;
        if free == 0 {
            return None;
        }
        let r = free.trailing_zeros() as u8;
        self.in_use |= 1 << r;
        Some(Reg(r))
    }

    /// Marks `reg` in use again (after a spill freed it); it must exist and be free.
    pub fn realloc(&mut self, reg: Reg) {
        let bit = 1u32 << reg.0;
        debug_assert!(self.exists & bit != 0, "{reg} does not exist");
        debug_assert!(self.in_use & bit == 0, "{reg} is already in use");
        self.in_use |= bit;
    }

    /// Returns `reg` to the pool.
    pub fn free(&mut self, reg: Reg) {
        let bit = 1u32 << reg.0;
        debug_assert!(self.in_use & bit != 0, "double free of {reg}");
        self.in_use &= !bit;
    }

    /// Whether `reg` is allocated now.
    pub fn is_allocated(&self, reg: Reg) -> bool {
        self.in_use & (1 << reg.0) != 0
    }

    /// Registers free now.
    pub fn free_count(&self) -> u32 {
        (self.exists & !self.in_use).count_ones()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocates_lowest_free_and_reallocates_a_given_register() {
        let mut a = RegAlloc::new(0b1110);
        assert_eq!(a.alloc(), Some(Reg(1)));
        assert_eq!(a.alloc(), Some(Reg(2)));
        a.free(Reg(1));
        assert_eq!(a.free_count(), 2);
        a.realloc(Reg(1));
        assert!(a.is_allocated(Reg(1)));
        assert_eq!(a.alloc(), Some(Reg(3)));
        assert_eq!(a.alloc(), None);
    }

    #[test]
    #[should_panic(expected = "double free")]
    #[cfg(debug_assertions)]
    fn double_free_is_caught() {
        let mut a = RegAlloc::new(0b10);
        let r = a.alloc().unwrap();
        a.free(r);
        a.free(r);
    }
}
