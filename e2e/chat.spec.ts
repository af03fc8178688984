import { composer, expect, messages, openApp, send, shape, test, transcript } from './fixtures'

test.describe('chat', () => {
  test('a prompt streams in and persists across a reload', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, '/stream 40 40')

    const reply = page.getByRole('article', { name: 'Assistant' }).last()
    // Seen mid-stream: the start is there, the end is not yet.
    await expect(reply).toContainText('word3')
    expect(await reply.innerText()).not.toContain('word40')
    await expect(reply).toContainText('word40')
    await expect(reply).toHaveAttribute('data-status', 'complete')
    // Compared once every block is rendered as markdown (parsed in idle time after it settles).
    await expect(transcript(page).locator('.md-plain')).toHaveCount(0)
    const before = await transcript(page).innerText()

    await page.reload()
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText('word40')
    await expect(transcript(page).locator('.md-plain')).toHaveCount(0)
    expect(await transcript(page).innerText()).toBe(before)
    expect(await shape(page)).toEqual(['user/text', 'assistant/text'])
  })

  test('a plain prompt gets a markdown reply that quotes it', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, 'Hello **Arbor**')
    const reply = page.getByRole('article', { name: 'Assistant' }).last()
    await expect(reply).toHaveAttribute('data-status', 'complete', { timeout: 10_000 })
    // The quote is a rendered blockquote; the user's own text is shown verbatim.
    await expect(reply.locator('blockquote')).toContainText('Hello Arbor')
    await expect(page.getByRole('article', { name: 'You' })).toHaveText('Hello **Arbor**')
    await expect(reply.getByText('scripted offline model')).toBeVisible()
  })

  test('prompts sent back to back run in order; the second shows as queued', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, '/stream 30 40')
    await expect(page.getByRole('button', { name: 'Stop' })).toBeVisible()
    await send(page, 'second prompt')

    const queued = page.getByRole('list', { name: 'Queued' })
    await expect(queued).toContainText('second prompt')
    await expect(queued).toHaveCount(0, { timeout: 15_000 })

    const replies = page.getByRole('article', { name: 'Assistant' })
    await expect(replies).toHaveCount(2, { timeout: 15_000 })
    await expect(replies.last()).toHaveAttribute('data-status', 'complete')
    expect(await shape(page)).toEqual(['user/text', 'assistant/text', 'user/text', 'assistant/text'])
    const users = page.getByRole('article', { name: 'You' })
    await expect(users).toHaveText(['/stream 30 40', 'second prompt'])
    await expect(replies.first()).toContainText('word30')
    await expect(replies.last()).toContainText('second prompt')
  })

  test('a queued prompt can be withdrawn before it starts', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, '/stream 40 40')
    await expect(page.getByRole('button', { name: 'Stop' })).toBeVisible()
    await send(page, 'never mind')
    await page.getByRole('button', { name: 'Remove queued prompt: never mind' }).click()
    await expect(page.getByRole('list', { name: 'Queued' })).toHaveCount(0)
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toHaveAttribute(
      'data-status',
      'complete',
      {
        timeout: 15_000,
      },
    )
    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0)
    expect(await shape(page)).toEqual(['user/text', 'assistant/text'])
  })

  test('Stop keeps the partial reply and ends the turn', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, '/stream 200 30')
    const reply = page.getByRole('article', { name: 'Assistant' }).last()
    await expect(reply).toContainText('word5')
    await page.getByRole('button', { name: 'Stop' }).click()

    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0)
    await expect(reply).not.toHaveAttribute('data-status', 'streaming')
    const partial = await reply.innerText()
    expect(partial).toContain('word5')
    expect(partial).not.toContain('word200')

    // The turn is over: a new prompt runs at once, and the partial text survives a reload.
    await page.reload()
    await expect(page.getByRole('article', { name: 'Assistant' }).first()).toContainText('word5')
    expect(await page.getByRole('article', { name: 'Assistant' }).first().innerText()).not.toContain(
      'word200',
    )
    await send(page, 'after stop')
    await expect(messages(page)).toHaveCount(4, { timeout: 10_000 })
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText('after stop')
  })

  test('an error shows exactly one error message, also after a reload', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, '/error boom')
    const alert = transcript(page).getByRole('alert')
    await expect(alert).toHaveCount(1)
    await expect(alert).toContainText('boom')
    // Let the turn settle completely, then count again.
    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0)
    await expect(page.getByRole('alert')).toHaveCount(1)

    await page.reload()
    await expect(transcript(page).getByRole('alert')).toHaveCount(1)
    await expect(page.getByRole('alert')).toContainText('boom')
    await expect(composer(page)).toBeEnabled()
  })
})
