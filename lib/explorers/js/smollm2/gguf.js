/* A GGUF file's header, read as lib/model/smollm2.py reads it through the gguf package: the metadata
 * (the model's shapes, the tokenizer's 49,152 tokens and 48,900 merges) and where each tensor's blocks
 * lie. Nothing is copied: the weights stay where the file's bytes are, and the kernel reads them there.
 *
 * The layout (GGUF version 3, little-endian): "GGUF", the version, how many tensors and metadata
 * entries; each entry a key, a type and a value (an array is a type, a count and the values); each
 * tensor a name, its dimensions (fastest-varying first), its type and its offset; then the tensors'
 * data, from the first multiple of `general.alignment` (32 by default) after the header.
 */

export const TYPES = { F32: 0, F16: 1, Q4_1: 3, Q8_0: 8 };
const NAMES = Object.fromEntries(Object.entries(TYPES).map(([k, v]) => [v, k]));
// Bytes per block of 32 numbers (F32: per number).
export const BLOCK_BYTES = { [TYPES.Q4_1]: 20, [TYPES.Q8_0]: 34 };

export class GGUFError extends Error {}

/** The header of the GGUF file in `bytes` (a Uint8Array over the whole file, or at least its header):
 *  {version, meta: {key: value}, tensors: {name: {type, typeName, dims, offset (from the file's start), bytes}}, dataStart}. */
export function readHeader(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const utf8 = new TextDecoder("utf-8");
  let at = 0;
  const need = (n) => {
    if (at + n > bytes.byteLength) throw new GGUFError(`the file ends inside its header (at byte ${at.toLocaleString("en")})`);
  };
  const u32 = () => { need(4); const v = view.getUint32(at, true); at += 4; return v; };
  const u64 = () => {
    need(8);
    const v = view.getBigUint64(at, true);
    at += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new GGUFError("a length in the header is too large");
    return Number(v);
  };
  const str = () => { const n = u64(); need(n); const s = utf8.decode(bytes.subarray(at, at + n)); at += n; return s; };
  const scalar = {
    0: () => { need(1); return view.getUint8(at++); },
    1: () => { need(1); return view.getInt8(at++); },
    2: () => { need(2); const v = view.getUint16(at, true); at += 2; return v; },
    3: () => { need(2); const v = view.getInt16(at, true); at += 2; return v; },
    4: u32,
    5: () => { need(4); const v = view.getInt32(at, true); at += 4; return v; },
    6: () => { need(4); const v = view.getFloat32(at, true); at += 4; return v; },
    7: () => { need(1); return view.getUint8(at++) !== 0; },
    8: str,
    10: u64,
    11: () => { need(8); const v = Number(view.getBigInt64(at, true)); at += 8; return v; },
    12: () => { need(8); const v = view.getFloat64(at, true); at += 8; return v; },
  };
  const value = (type) => {
    if (type === 9) {
      const inner = u32(), n = u64();
      const read = scalar[inner];
      if (!read) throw new GGUFError(`an array of unknown type ${inner}`);
      const out = new Array(n);
      for (let i = 0; i < n; i++) out[i] = read();
      return out;
    }
    const read = scalar[type];
    if (!read) throw new GGUFError(`a value of unknown type ${type}`);
    return read();
  };

  need(4);
  if (utf8.decode(bytes.subarray(0, 4)) !== "GGUF") throw new GGUFError("the file does not begin with GGUF");
  at = 4;
  const version = u32();
  if (version !== 3) throw new GGUFError(`GGUF version ${version}; the page reads version 3`);
  const nTensors = u64(), nMeta = u64();
  const meta = {};
  for (let i = 0; i < nMeta; i++) {
    const key = str();
    meta[key] = value(u32());
  }
  const infos = [];
  for (let i = 0; i < nTensors; i++) {
    const name = str();
    const nDims = u32();
    const dims = [];
    for (let d = 0; d < nDims; d++) dims.push(u64());
    const type = u32(), offset = u64();
    infos.push({ name, dims, type, offset });
  }
  const alignment = meta["general.alignment"] ?? 32;
  const dataStart = Math.ceil(at / alignment) * alignment;
  const tensors = {};
  for (const t of infos) {
    const count = t.dims.reduce((a, b) => a * b, 1);
    let size;
    if (t.type === TYPES.F32) size = 4 * count;
    else if (t.type in BLOCK_BYTES) size = (count / 32) * BLOCK_BYTES[t.type];
    else throw new GGUFError(`tensor ${t.name} is of type ${t.type}; the page reads F32, Q4_1 and Q8_0`);
    tensors[t.name] = { type: t.type, typeName: NAMES[t.type], dims: t.dims, offset: dataStart + t.offset, bytes: size };
  }
  return { version, meta, tensors, dataStart };
}

/** How many bytes the header takes, from its first bytes (to know how much to read before the weights):
 *  read the header progressively is not needed here; the page holds the whole file. */
export function headerBytes(header) {
  return header.dataStart;
}
