// A stdio MCP server for the tests, built with the official SDK. Run as `node stdio-server.cjs [crash-after-ms]`.
const fs = require('node:fs');
const path = require('node:path');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const {
  StdioServerTransport,
} = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const server = new McpServer({ name: 'fake-stdio', version: '1.0.0' });
const text = (value) => ({
  content: [
    {
      type: 'text',
      text: typeof value === 'string' ? value : JSON.stringify(value),
    },
  ],
});

server.registerTool(
  'echo',
  {
    description: 'Echo the text back',
    inputSchema: {
      text: z.string().min(1),
      times: z.number().int().min(1).max(3).optional(),
    },
  },
  async ({ text: said, times }) => text(`echo: ${said.repeat(times ?? 1)}`),
);

server.registerTool(
  'inspect',
  {
    description:
      'Report what this process sees: environment, working folder, files',
    inputSchema: { look: z.string(), write: z.string() },
  },
  async ({ look, write }) => {
    let wrote;
    try {
      fs.writeFileSync(write, 'x');
      wrote = 'ok';
    } catch (error) {
      wrote = error.code || String(error);
    }
    let wroteHome;
    try {
      fs.writeFileSync(
        path.join(process.env.HOME || '/nonexistent', 'note.txt'),
        'x',
      );
      wroteHome = 'ok';
    } catch (error) {
      wroteHome = error.code || String(error);
    }
    return text({
      env: process.env,
      cwd: process.cwd(),
      lookExists: fs.existsSync(look),
      wrote,
      wroteHome,
    });
  },
);

server.registerTool(
  'big',
  { description: 'Answer with a very long text', inputSchema: {} },
  async () => text('y'.repeat(400 * 1024) + ' MCP RESULT>>> after the end'),
);

server.registerTool(
  'crash',
  { description: 'Exit at once', inputSchema: {} },
  async () => process.exit(3),
);

const crashAfter = Number(process.argv[2] || 0);
if (crashAfter > 0) setTimeout(() => process.exit(4), crashAfter);

server.connect(new StdioServerTransport()).catch((error) => {
  process.stderr.write(String(error));
  process.exit(1);
});
