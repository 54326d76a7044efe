/**
 * Provider payloads shaped as in the providers' documentation (function calling guides and API
 * references of OpenAI Chat Completions and Responses, Anthropic Messages, MCP 2025-11-25).
 */

export function chatCompletion() {
  return {
    id: "chatcmpl-abc123",
    object: "chat.completion",
    created: 1699896916,
    model: "gpt-4o-mini-2024-07-18",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: null,
          refusal: null,
          annotations: [],
          tool_calls: [
            {
              id: "call_abc123",
              type: "function",
              function: { name: "get_current_weather", arguments: '{\n"location": "Boston, MA"\n}' },
            },
            {
              id: "call_def456",
              type: "function",
              function: {
                name: "get_current_weather",
                arguments: '{"location": "Paris, France", "unit": "celsius"}',
              },
            },
          ],
        },
        logprobs: null,
        finish_reason: "tool_calls",
      },
    ],
    usage: {
      prompt_tokens: 82,
      completion_tokens: 17,
      total_tokens: 99,
      completion_tokens_details: {
        reasoning_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
    service_tier: "default",
    system_fingerprint: "fp_44709d6fcb",
  };
}

export function responsesResponse() {
  return {
    id: "resp_67ca09c5efe0819096d0511c92b8c890096610f474011cc0",
    object: "response",
    created_at: 1741294021,
    status: "completed",
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: "gpt-4.1-2025-04-14",
    output: [
      { id: "rs_6890e972fa7c819ca8bc561526b989170694874912ae0ea6", type: "reasoning", summary: [] },
      {
        type: "function_call",
        id: "fc_67ca09c6bedc8190a7abfec07b1a1332096610f474011cc0",
        call_id: "call_unLAR8MvFNptuiZK6K6HCy5k",
        name: "get_current_weather",
        arguments: '{"location":"Boston, MA","unit":"celsius"}',
        status: "completed",
      },
    ],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1.0,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: [
      {
        type: "function",
        name: "get_current_weather",
        description: "Get the current weather in a given location",
        parameters: {
          type: "object",
          properties: {
            location: { type: "string" },
            unit: { type: "string", enum: ["celsius", "fahrenheit"] },
          },
          required: ["location", "unit"],
        },
        strict: true,
      },
    ],
    top_p: 1.0,
    truncation: "disabled",
    usage: {
      input_tokens: 291,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 23,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 314,
    },
    user: null,
    metadata: {},
  };
}

export function anthropicMessage() {
  return {
    id: "msg_01Aq9w938a90dw8q",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5-20250929",
    content: [
      { type: "text", text: "I'll check the current weather in San Francisco for you." },
      {
        type: "tool_use",
        id: "toolu_01A09q90qw90lq917835lq9",
        name: "get_weather",
        input: { location: "San Francisco, CA", unit: "celsius" },
      },
    ],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: {
      input_tokens: 472,
      output_tokens: 91,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}

export function mcpToolsCall() {
  return {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "get_weather", arguments: { location: "New York" } },
  };
}
