import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { listen } from '../../../local/http';
import { serve } from './serve';

describe('listen', () => {
  it('returns the port it got, and rejects with EADDRINUSE for a taken one', async () => {
    const { port } = await serve((_request, response) => void response.end());
    expect(port).toBeGreaterThan(0);
    const second = createServer();
    await expect(listen(second, { port, host: '127.0.0.1' })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(second.listening).toBe(false);
  });
});
