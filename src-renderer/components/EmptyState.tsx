/** Shown in an empty conversation: what to try with the offline model. */
export function EmptyState() {
  return (
    <div className="empty-state">
      <h2>Start a conversation</h2>
      <p>
        Type a message below. The built-in offline model answers without any network, and also understands{' '}
        <code>/stream 50</code>, <code>/tool write_file {'{"path":"a.txt","content":"hi"}'}</code> and{' '}
        <code>/error boom</code>.
      </p>
    </div>
  )
}
