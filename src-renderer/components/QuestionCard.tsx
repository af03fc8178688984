import { useId, useState } from 'react'
import type { InteractionPart } from '../../src-shared/types'
import { useActions, useApp } from '../state/hooks'

/** A question the assistant asks the user; the turn waits for the answer. */
export function QuestionCard({ part }: { part: InteractionPart }) {
  const { respond } = useActions()
  const busy = useApp((s) => s.responding[part.interaction_id] === true)
  const [answer, setAnswer] = useState('')
  const titleId = useId()

  return (
    <section className="interaction-card question" role="dialog" aria-labelledby={titleId}>
      <header className="interaction-head">
        <span className="interaction-icon" aria-hidden="true">
          ?
        </span>
        <h2 id={titleId}>The assistant asks</h2>
      </header>
      <p className="interaction-desc question-text">{part.question ?? part.description}</p>
      <form
        className="answer-form"
        onSubmit={(e) => {
          e.preventDefault()
          if (answer.trim()) void respond(part.interaction_id, { answer: answer.trim() })
        }}
      >
        <input
          className="input"
          aria-label="Your answer"
          placeholder="Type your answer"
          autoFocus
          value={answer}
          onChange={(e) => setAnswer(e.target.value)}
        />
        <button type="submit" className="btn btn-primary" disabled={busy || !answer.trim()}>
          Answer
        </button>
      </form>
    </section>
  )
}
