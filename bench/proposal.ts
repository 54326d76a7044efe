/** The proposal every gateway benchmark sends: an OpenAI Chat tool call the sample policy allows. */
export const proposalBody = JSON.stringify({
  format: "openai-chat",
  payload: {
    id: "call_1",
    type: "function",
    function: { name: "repo_read", arguments: JSON.stringify({ workspace: "ws-demo", path: "README.md" }) },
  },
});
