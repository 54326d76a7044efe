// A tool backend in plain Node (no framework, no build): it runs create_payment_draft only with a
// grant Writ issued for exactly these arguments. Writ POSTs the arguments as JSON with the grant
// in X-Writ-Grant; the grant's audience is this backend's origin, as in the tool's backend.url.
import { createServer } from "node:http";
import { GrantError, verifyGrant } from "writ/executor";

const writ = process.env.WRIT_URL ?? "http://127.0.0.1:8080";
const server = createServer(async (req, res) => {
  const reply = (status, body) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  try {
    const args = JSON.parse(Buffer.concat(await req.toArray()).toString("utf8"));
    const grant = await verifyGrant(req.headers["x-writ-grant"], {
      issuer: "writ", // the gateway's grants.issuer
      audience: `http://127.0.0.1:${server.address().port}`,
      keys: `${writ}/.well-known/jwks.json`, // fetched once, cached
      action: { name: "create_payment_draft" },
      args,
    });
    reply(200, { draft_id: `drf_${grant.jti.slice(0, 8)}`, status: "draft", amount: args.amount });
  } catch (error) {
    if (!(error instanceof GrantError)) return reply(400, { message: "send the arguments as a JSON object" });
    reply(error.code === "unavailable" ? 503 : 403, { code: error.code, message: error.message });
  }
});
server.listen(Number(process.env.PORT ?? 8081), "127.0.0.1", () =>
  console.log(`listening on ${server.address().port}`),
);
