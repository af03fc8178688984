import { composer, expect, openApp, test, transcript, waitIdle } from './fixtures'

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
)

test.describe('attachments', () => {
  test('pick and drop files: text for the model, an image beside it; other files are refused with why', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    const form = page.getByRole('form', { name: 'Compose a message' })
    await page.getByLabel('Files to attach').setInputFiles([
      { name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Plan\n- museum\n- fado') },
      { name: 'report.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.7') },
    ])
    const chips = form.getByRole('list', { name: 'Attached files' })
    await expect(chips.getByRole('button', { name: /^notes\.md 3 lines/ })).toBeVisible()
    await expect(form.getByRole('alert')).toHaveText(
      /report\.pdf: only text files and images can be attached/,
    )

    // Dropped onto the composer: an image.
    const drop = await page.evaluateHandle(
      (bytes) => {
        const dt = new DataTransfer()
        dt.items.add(new File([new Uint8Array(bytes)], 'dot.png', { type: 'image/png' }))
        return dt
      },
      [...PNG],
    )
    await form.dispatchEvent('dragover', { dataTransfer: drop })
    await form.dispatchEvent('drop', { dataTransfer: drop })
    await expect(chips.getByRole('listitem')).toHaveCount(2)
    // A file can be taken off again before sending.
    await page
      .getByLabel('Files to attach')
      .setInputFiles([{ name: 'extra.txt', mimeType: 'text/plain', buffer: Buffer.from('spare') }])
    await chips.getByRole('button', { name: 'Remove extra.txt' }).click()
    await expect(chips.getByRole('listitem')).toHaveCount(2)

    await composer(page).fill('What do you make of these?')
    await composer(page).press('Enter')
    await waitIdle(page)
    const you = transcript(page).getByRole('article', { name: 'You' }).last()
    await expect(you.getByRole('list', { name: 'Attached files' }).getByRole('listitem')).toHaveCount(2)
    await expect(chips).toHaveCount(0)
    // The scripted model names what it was given: the text file it read, the image beside it.
    const reply = transcript(page).getByRole('article', { name: 'Assistant' }).last()
    await expect(reply).toContainText('You attached notes.md (3 lines), the image dot.png (image/png).')

    // A sent file opens to read; the image shows.
    await you.getByRole('button', { name: /^notes\.md/ }).click()
    const dialog = page.getByRole('dialog', { name: 'notes.md' })
    await expect(dialog).toContainText('- museum')
    await page.keyboard.press('Escape')
    await you.getByRole('button', { name: /^dot\.png/ }).click()
    await expect(
      page.getByRole('dialog', { name: 'dot.png' }).getByRole('img', { name: 'dot.png' }),
    ).toBeVisible()
    await page.keyboard.press('Escape')

    // After a reload the files are still on the message.
    await page.reload()
    await expect(
      transcript(page).getByRole('article', { name: 'You' }).last().getByRole('listitem'),
    ).toHaveCount(2)
  })

  test('a message over the size limit is offered as an attached file instead of failing', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    const long = 'All work and no play. '.repeat(5000) // 110,000 characters
    await composer(page).fill(long)
    const notice = page.getByRole('status').filter({ hasText: 'a message holds at most 100,000' })
    await expect(notice).toContainText('This is 109,999 characters')
    await expect(page.getByRole('button', { name: 'Send', exact: true })).toBeDisabled()
    await notice.getByRole('button', { name: 'Send as a file' }).click()
    await waitIdle(page)
    const you = transcript(page).getByRole('article', { name: 'You' }).last()
    await expect(you).toContainText('The text is in the attached file.')
    await expect(you.getByRole('button', { name: /^pasted-text\.txt 1 line / })).toBeVisible()
    await expect(composer(page)).toHaveValue('')
    await expect(transcript(page).getByRole('alert')).toHaveCount(0)

    // Over what a file may hold too: said in the composer, with nothing to send.
    await composer(page).fill('x'.repeat(1_000_001))
    const over = page.getByRole('status').filter({ hasText: 'Shorten it, or split it into parts' })
    await expect(over).toContainText(
      'This is 1,000,001 characters: more than a message (100,000) or an attached file (1,000,000) holds.',
    )
    await expect(over.getByRole('button')).toHaveCount(0)
    await expect(page.getByRole('button', { name: 'Send', exact: true })).toBeDisabled()
  })
})
