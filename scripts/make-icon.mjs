// Writes resources/icon.png (512x512 RGBA) and resources/icon.svg: a branching tree (sessions that
// fork) on a dark rounded square. No dependencies: shapes are signed-distance functions,
// supersampled 4x4 per pixel, encoded with node:zlib.
// Usage: node scripts/make-icon.mjs
import { writeFileSync, mkdirSync } from 'node:fs'
import { deflateSync } from 'node:zlib'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const SIZE = 512
const SS = 4
const root = join(dirname(fileURLToPath(import.meta.url)), '..')

// ---- geometry (512 space) ----
const tile = { x0: 32, y0: 32, x1: 480, y1: 480, r: 104 }
const trunk = [
  [256, 404, 256, 132],
  [256, 322, 164, 238],
  [256, 268, 352, 186],
  [164, 238, 150, 166],
]
const leaves = [
  [256, 126, 30],
  [352, 182, 26],
  [164, 238, 22],
  [148, 160, 24],
]
const rootNode = [256, 404, 24]
const LINE_W = 15 // half width
const bgTop = [24, 54, 42]
const bgBottom = [9, 20, 16]
const green = [74, 222, 128]
const leaf = [134, 239, 172]

// ---- signed distances ----
const clamp = (v, a, b) => Math.max(a, Math.min(b, v))
function sdRoundRect(x, y, { x0, y0, x1, y1, r }) {
  const cx = (x0 + x1) / 2
  const cy = (y0 + y1) / 2
  const hx = (x1 - x0) / 2 - r
  const hy = (y1 - y0) / 2 - r
  const qx = Math.abs(x - cx) - hx
  const qy = Math.abs(y - cy) - hy
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r
}
function sdSegment(x, y, [ax, ay, bx, by]) {
  const px = x - ax
  const py = y - ay
  const dx = bx - ax
  const dy = by - ay
  const h = clamp((px * dx + py * dy) / (dx * dx + dy * dy), 0, 1)
  return Math.hypot(px - dx * h, py - dy * h)
}
const sdCircle = (x, y, [cx, cy, r]) => Math.hypot(x - cx, y - cy) - r

function over(dst, rgb, a) {
  dst[0] = rgb[0] * a + dst[0] * (1 - a)
  dst[1] = rgb[1] * a + dst[1] * (1 - a)
  dst[2] = rgb[2] * a + dst[2] * (1 - a)
}

/** Colour of one sample: [r, g, b, a] with a in 0..1. */
function sample(x, y) {
  if (sdRoundRect(x, y, tile) > 0) return [0, 0, 0, 0]
  const t = (y - tile.y0) / (tile.y1 - tile.y0)
  const c = [0, 1, 2].map((i) => bgTop[i] * (1 - t) + bgBottom[i] * t)
  // soft glow behind the canopy
  const g = Math.max(0, 1 - Math.hypot(x - 256, y - 210) / 230)
  over(c, green, 0.16 * g * g)
  // thin inner rim
  if (sdRoundRect(x, y, tile) > -3) over(c, [60, 110, 88], 0.6)
  // branches
  let dBranch = Infinity
  for (const s of trunk) dBranch = Math.min(dBranch, sdSegment(x, y, s) - LINE_W)
  if (dBranch < 0) over(c, green, 1)
  // leaves: filled, with a darker outline so overlaps read clearly
  for (const l of leaves) {
    const d = sdCircle(x, y, l)
    if (d < 5) over(c, bgBottom, 1)
    if (d < 0) over(c, leaf, 1)
  }
  // root: ring
  const dr = sdCircle(x, y, rootNode)
  if (dr < 5) over(c, bgBottom, 1)
  if (dr < 0) over(c, green, 1)
  if (dr < -11) over(c, bgTop, 1)
  return [c[0], c[1], c[2], 1]
}

// ---- raster ----
const raw = Buffer.alloc(SIZE * (SIZE * 4 + 1))
for (let py = 0; py < SIZE; py++) {
  const row = py * (SIZE * 4 + 1)
  raw[row] = 0 // filter: none
  for (let px = 0; px < SIZE; px++) {
    let r = 0
    let g = 0
    let b = 0
    let a = 0
    for (let sy = 0; sy < SS; sy++) {
      for (let sx = 0; sx < SS; sx++) {
        const s = sample(px + (sx + 0.5) / SS, py + (sy + 0.5) / SS)
        r += s[0] * s[3]
        g += s[1] * s[3]
        b += s[2] * s[3]
        a += s[3]
      }
    }
    const o = row + 1 + px * 4
    if (a > 0) {
      raw[o] = Math.round(r / a)
      raw[o + 1] = Math.round(g / a)
      raw[o + 2] = Math.round(b / a)
    }
    raw[o + 3] = Math.round((a / (SS * SS)) * 255)
  }
}

const crcTable = new Uint32Array(256).map((_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
function crc32(buf) {
  let c = 0xffffffff
  for (const byte of buf) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
function chunk(type, data) {
  const len = Buffer.alloc(4)
  len.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([len, body, crc])
}
const ihdr = Buffer.alloc(13)
ihdr.writeUInt32BE(SIZE, 0)
ihdr.writeUInt32BE(SIZE, 4)
ihdr[8] = 8 // bit depth
ihdr[9] = 6 // RGBA
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', ihdr),
  chunk('IDAT', deflateSync(raw, { level: 9 })),
  chunk('IEND', Buffer.alloc(0)),
])

// ---- svg twin ----
const hex = (rgb) => '#' + rgb.map((v) => v.toString(16).padStart(2, '0')).join('')
const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${SIZE} ${SIZE}" width="${SIZE}" height="${SIZE}">
  <defs>
    <linearGradient id="bg" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="${hex(bgTop)}"/>
      <stop offset="1" stop-color="${hex(bgBottom)}"/>
    </linearGradient>
    <radialGradient id="glow" cx="256" cy="210" r="230" gradientUnits="userSpaceOnUse">
      <stop offset="0" stop-color="${hex(green)}" stop-opacity="0.16"/>
      <stop offset="1" stop-color="${hex(green)}" stop-opacity="0"/>
    </radialGradient>
  </defs>
  <rect x="${tile.x0}" y="${tile.y0}" width="${tile.x1 - tile.x0}" height="${tile.y1 - tile.y0}" rx="${tile.r}" fill="url(#bg)"/>
  <rect x="${tile.x0}" y="${tile.y0}" width="${tile.x1 - tile.x0}" height="${tile.y1 - tile.y0}" rx="${tile.r}" fill="url(#glow)"/>
  <rect x="${tile.x0 + 1.5}" y="${tile.y0 + 1.5}" width="${tile.x1 - tile.x0 - 3}" height="${tile.y1 - tile.y0 - 3}" rx="${tile.r - 1.5}" fill="none" stroke="#3c6e58" stroke-opacity="0.6" stroke-width="3"/>
  <g stroke="${hex(green)}" stroke-width="${LINE_W * 2}" stroke-linecap="round">
${trunk.map(([ax, ay, bx, by]) => `    <line x1="${ax}" y1="${ay}" x2="${bx}" y2="${by}"/>`).join('\n')}
  </g>
${leaves.map(([cx, cy, r]) => `  <circle cx="${cx}" cy="${cy}" r="${r}" fill="${hex(leaf)}" stroke="${hex(bgBottom)}" stroke-width="10" paint-order="stroke"/>`).join('\n')}
  <circle cx="${rootNode[0]}" cy="${rootNode[1]}" r="${rootNode[2] - 5.5}" fill="${hex(bgTop)}" stroke="${hex(green)}" stroke-width="11"/>
</svg>
`

mkdirSync(join(root, 'resources'), { recursive: true })
writeFileSync(join(root, 'resources/icon.png'), png)
writeFileSync(join(root, 'resources/icon.svg'), svg)
console.log(`wrote resources/icon.png (${png.length} bytes) and resources/icon.svg`)
