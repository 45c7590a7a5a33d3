//! Private-register writes through the firmware (NVK's `SET_PRIV_REG` and
//! `SET_CONSERVATIVE_RASTER_STATE` macros): the macro hands the value, mask and
//! register to the falcon microcontroller through scratch and `SET_FALCON04`, then
//! spins on a no-op until the falcon answers in scratch.

use super::Scratch;
use crate::class;
use crate::mme::{Builder, Cmp, Value};

/// The register holding the conservative rasterization state (bits 24:23).
const CONSERVATIVE_RASTER_REG: u32 = 0x41_8800;

/// Writes `value` under `mask` to private register `reg` and waits for the falcon's
/// answer. Mirrors NVK's mme_set_priv_reg.
fn priv_reg(b: &mut Builder, value: Value, mask: Value, reg: Value) {
    b.mthd(class::WAIT_FOR_IDLE);
    b.emit(Value::Zero);
    b.mthd(class::set_mme_shadow_scratch(Scratch::Falcon0 as u16));
    b.emit(Value::Zero);
    b.emit(value);
    b.emit(mask);
    b.mthd(class::SET_FALCON04);
    b.emit(reg);
    let answer = b.mov(Value::Zero);
    b.while_(Cmp::Ne, answer, Value::Imm(1), |b| {
        b.load_scratch_to(answer, Scratch::Falcon0 as u16);
        b.mthd(class::NO_OPERATION);
        b.emit(Value::Zero);
    });
    b.free_reg(answer);
}

/// The `SET_PRIV_REG` macro: value, mask, register. Mirrors nvk_mme_set_priv_reg.
pub fn set_priv_reg(b: &mut Builder) {
    let value = b.load();
    let mask = b.load();
    let reg = b.load();
    priv_reg(b, value, mask, reg);
    for v in [value, mask, reg] {
        b.free_reg(v);
    }
}

/// The `SET_CONSERVATIVE_RASTER_STATE` macro (MAXWELL_B up to Volta): the extra
/// overestimation at bits 24:23, written to its private register when it changed.
/// Mirrors nvk_mme_set_conservative_raster_state.
pub fn set_conservative_raster_state(b: &mut Builder) {
    let state = b.load();
    let old = b.load_scratch(Scratch::ConservativeRasterState as u16);
    b.if_(Cmp::Ne, state, old, |b| {
        b.store_scratch(Scratch::ConservativeRasterState as u16, state);
        priv_reg(
            b,
            state,
            Value::Imm(0b11 << 23),
            Value::Imm(CONSERVATIVE_RASTER_REG),
        );
    });
    b.free_reg(old);
    b.free_reg(state);
}
