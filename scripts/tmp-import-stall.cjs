const { spawn } = require('child_process')
const WebSocket = require('ws')
const sdk = require(require('fs').readdirSync(__dirname + '/../out/main/chunks').filter(f => f.startsWith('sdk-')).map(f => __dirname + '/../out/main/chunks/' + f)[0])
const dir = process.argv[2]
if (process.argv[2] === '--pinger') {
  ;(async () => {
    const b = await sdk.connectArbor({ url: process.argv[3], token: process.argv[4], WebSocket })
    const small = await b.sessions.create({ title: 'pinger' })
    let worst = 0, pinging = false, all = []
    process.on('message', async (m) => {
      if (m === 'start') { worst = 0; all = []; pinging = true; while (pinging) { const t = performance.now(); await small.get_info(); const d = performance.now() - t; all.push(d); if (d > worst) console.error('worst ping so far', d.toFixed(0), 'ended at', Date.now()); worst = Math.max(worst, d); await new Promise(r => setTimeout(r, 5)) } }
      if (m === 'stop') { pinging = false; await new Promise(r => setTimeout(r, 50)); all.sort((x, y) => x - y); process.send({ worst, p99: all[Math.floor(all.length * 0.99)], n: all.length }) }
      if (m === 'exit') { await b.close(); process.exit(0) }
    })
    process.send('ready')
  })()
  return
}
;(async () => {
  const srv = spawn('node', [...(process.env.NODE_FLAGS ? process.env.NODE_FLAGS.split(' ') : []), 'out/main/serve.js', '--data-dir', dir, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const url = await new Promise((res) => { let buf = ''; srv.stdout.on('data', (d) => { if (process.env.NODE_FLAGS) process.stderr.write(d); buf += d; const m = buf.match(/https?:\/\/\S+/); if (m) res(m[0]) }) })
  const u = new URL(url); const token = u.searchParams.get('token') ?? u.hash.replace(/^#?token=/, '')
  const a = await sdk.connectArbor({ url: u.origin, token, WebSocket })
  const pinger = require('child_process').fork(__filename, ['--pinger', u.origin, token])
  await new Promise((r) => pinger.once('message', r))
  const list = await a.sessions.list()
  for (const name of (process.argv[3] ?? 'Half,Big').split(',')) {
    const info = list.find((s) => s.title === name)
    const file = await a.sessions.export(info.session_id, { format: 'json' })
    // Ping every 5 ms on the other connection: the longest answer is the host's stall.
    await new Promise(r => setTimeout(r, 200))
    pinger.send('start')
    const t0 = performance.now()
    const out = await a.sessions.import({ data: file.text })
    const took = performance.now() - t0
    pinger.send('stop')
    const { worst, p99, n } = await new Promise((r) => pinger.once('message', r))
    console.log(`${name}: ${info.message_count} messages, ${(file.text.length / 1e6).toFixed(1)} MB: import ${took.toFixed(0)} ms, pings ${n}: longest ${worst.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, ${out.sessions[0].message_count} back`)
  }
  pinger.send('exit'); await a.close(); srv.kill()
})().catch((e) => { console.error(e); process.exit(1) })
