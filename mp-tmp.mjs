import { runnerImport } from 'vite'
import { join } from 'node:path'
const ROOT='/work/main'
const load = async (p) => (await runnerImport(join(ROOT, p), { root: ROOT, configFile: false, logLevel: 'silent' })).module
const { MessageList } = await load('src-renderer/state/messages.ts')
const message = (seq) => ({ message_id: `msg_${String(seq).padStart(8,'0')}`, session_id:'s', seq, role: 'user', kind:'text', status:'complete', revision:1, created_at:seq, updated_at:seq, parts:[{type:'text',part_id:`prt_${seq}`,text:`m ${seq}`}]})
const med = (xs) => xs.sort((a,b)=>a-b)[xs.length>>1]
for (const n of [100, 100000, 100, 100000]) {
  const first = 1_000_000 - n
  const list = MessageList.from(Array.from({length:n},(_,i)=>message(first+i)))
  const items = Array.from({length:100},(_,i)=>message(first-100+i))
  const A=[],B=[],C=[]
  for (let k=0;k<2000;k++){
    let t0=performance.now()
    for (const m of items) list.indexOf(m.message_id, m.seq)
    let t1=performance.now()
    list.insert(items)
    let t2=performance.now()
    const mp = new Map(); 
    A.push(t1-t0); B.push(t2-t1)
  }
  console.log(n, 'indexOf×100', med(A).toFixed(4), 'insert', med(B).toFixed(4))
}
