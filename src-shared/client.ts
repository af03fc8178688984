import { ArborError, type ArborErrorShape } from './errors'

/**
 * A refused remote call, carrying the canonical `{ code, message }`. It is an ArborError, so a
 * caller handles a refusal the same way whether the session is local or remote.
 */
export class ClientError extends ArborError {
  constructor(error: ArborErrorShape) {
    super(error.code, error.message)
    this.name = 'ClientError'
  }
}
